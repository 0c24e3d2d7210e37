import KinesiaBus
import KinesiaClient
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// `kinesia status`: one table of the live processes on the bus and their counters.
///
/// Listens to `health/` for `--wait` seconds (every process reports about once a second) and
/// prints ``StatusTable``: name, role, pid, uptime, then the counters (poses, events, gaps,
/// decode errors...). Exits 0 when at least one process answered, 1 with a message otherwise.
public struct StatusCommand: ParsableCommand {
    /// `status`, with its help.
    public static let configuration = CommandConfiguration(
        name: "status", summary: "Print a table of the live processes on the bus and their counters.",
        discussion: """
            Listens to health/ for --wait seconds and prints one row per process that reported: \
            name, role, pid, uptime, then its counters. Exits 1 when nothing answered.
            """)

    /// The options.
    public static var arguments: [Argument<StatusCommand>] {
        [
            BusProcess.busArgument(\.bus),
            .option(
                "wait", \.wait, valueName: "s",
                help: "How long to listen for health reports."),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()
    /// `--wait`.
    public var wait = 1.5

    /// A command with every default.
    public init() {}

    /// Checks `--wait`.
    public func validate() throws(CLIError) {
        guard wait.isFinite, wait > 0 else {
            throw CLIError.usage("--wait must be a positive number of seconds")
        }
    }

    /// Collects the reports and prints the table.
    /// - Throws: ``CLIError/failure(_:)`` when no process answered.
    public func run(context: CommandContext) async throws {
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let wait = Duration.seconds(double: self.wait)
        let reports = try await BusProcess.run(context: context) { stop in
            try Self.collect(bus: bus, for: wait, stop: stop)
        }
        guard !reports.isEmpty else {
            throw CLIError.failure(
                "no process answered on \(bus) within \(WatchRenderer.number(self.wait, 1)) s "
                    + "(is a broker running there? start one with 'kinesia broker' or 'kinesia up')")
        }
        let lines = StatusTable.render(reports)
        context.standardOutput.write(lines.joined(separator: "\n") + "\n")
    }

    /// The latest report of every process heard within `duration`.
    static func collect(bus: BusAddress, for duration: Duration, stop: StopToken) throws -> [HealthReport] {
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus, prefixes: [.kind(.health)])
        defer { subscriber.close() }
        let clock = ContinuousClock()
        let deadline = clock.now + duration
        var reports: [String: HealthReport] = [:]
        while !stop.isRequested {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { break }
            guard let delivery = try subscriber.receive(timeout: min(left, .milliseconds(100))) else {
                continue
            }
            if case .message(let message, _) = delivery, case .health(let report) = message.body {
                reports[message.topic.process ?? report.process] = report
            }
        }
        return Array(reports.values)
    }
}
