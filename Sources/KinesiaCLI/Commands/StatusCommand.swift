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
        let reports = try await BusProcess.run(context: context, thread: "status") { stop in
            try HealthCollector.collect(bus: bus, for: wait) { stop.isRequested }
        }
        guard !reports.isEmpty else {
            throw CLIError.failure(
                "no process answered on \(bus) within \(WatchRenderer.number(self.wait, 1)) s "
                    + "(is a broker running there? start one with 'kinesia broker' or 'kinesia up')")
        }
        let lines = StatusTable.render(reports)
        context.standardOutput.write(lines.joined(separator: "\n") + "\n")
    }
}
