import Foundation
public import KinesiaClient
public import KinesiaService
import KinesiaSupervisor
public import KinesiaSystem
import KinesiaWeb
import Synchronization

/// `kinesia demo`'s long-running part: the site's processes under a ``Supervisor`` (as `kinesia
/// up` runs them), the clinic's day on it (``DemoDay``) and its dashboard (a ``WebService`` on
/// a free loopback port, with a token of its own: the address is told with the token), until
/// the day ends, a process of the site fails for good, or a signal stops it.
///
/// A ``Service``: the stop's request (a signal) stops the day (its runs stay open) and shuts the
/// site down gracefully: every child is reaped before ``run(until:)`` returns, the broker last.
/// Its cancellation (a second Control-C, by ``ServiceRunner/ForcedEnd/cancelService``) kills the
/// children at once. The live view and the summary are the command's.
///
/// ```swift
/// let service = DemoService(site: site, bus: bus, busDirectory: path, output: output, log: log) { print($0) }
/// let runner = ServiceRunner(logger: nil, stopDeadline: nil, forcedEnd: .cancelService)
/// let outcome = try await runner.run(service, signals: SignalStream([.interrupt, .terminate]))
/// ```
public struct DemoService: Service {
    /// How the day ended.
    public struct Outcome: Sendable {
        /// The site's exit status: 0 when every process ended well.
        public var status: Int32
        /// What stopped the day early, if anything but a signal.
        public var dayFailure: String?
        /// The signal that stopped the demo early, if one did.
        public var interruptedBy: ProcessSignal?
    }

    /// The day and its site.
    public let site: DemoSite
    /// The bus of the site.
    public let bus: BusAddress
    /// The bus directory (the site's state goes in its `state/`).
    public let busDirectory: String
    /// Where the consumers keep what they make.
    public let output: DemoOutput
    /// The log of the demo's own camera.
    public let log: Logger
    /// Tells the demo's reader what happens, a line at a time.
    public let tell: @Sendable (String) -> Void

    /// A demo of `site` on the bus `busDirectory`.
    public init(
        site: DemoSite, bus: BusAddress, busDirectory: String, output: DemoOutput, log: Logger,
        tell: @escaping @Sendable (String) -> Void
    ) {
        self.site = site
        self.bus = bus
        self.busDirectory = busDirectory
        self.output = output
        self.log = log
        self.tell = tell
    }

    /// Runs the site and the day until the day ends and every process has been reaped.
    ///
    /// - Parameter stop: Stops the demo early, gracefully (cancelling the task: at once).
    /// - Returns: How the day ended.
    public func run(until stop: StopToken) async -> Outcome {
        let tell = self.tell
        let topology = site.topology(bus: busDirectory, output: output)
        let supervisor = Supervisor(topology: topology) { event in tell("\(event)") }
        var planned = DemoDay(
            bus: bus, camera: DemoSite.camera, exercise: site.exercise, patients: site.patients,
            secondsEach: site.seconds / 2, state: busDirectory + "/state", database: output.database,
            log: log,
            say: tell)
        // The voices follow the bus live: the day begins once they hear it. (The record replays
        // what it missed from the journals.)
        planned.listeners = Set(topology.processes.filter { $0.command.first == "voice" }.map(\.name))
        let day = planned
        let interrupted = StopToken()
        let dashboard = StopToken()
        let dayFailure = DemoDay.FailureBox()
        let status = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // The day, then the end of the site.
                let failure = await DedicatedThread.run(named: "kinesia.demo.day") {
                    day.run(stop: interrupted) {}
                }
                if let failure {
                    tell("the day stopped: \(failure)")
                    dayFailure.value.withLock { $0 = failure }
                }
                supervisor.requestShutdown()
            }
            group.addTask {
                // The dashboard, for as long as the site runs.
                let failure = await DedicatedThread.run(named: "kinesia.demo.web") {
                    serveDashboard(until: dashboard)
                }
                if let failure { tell("the dashboard is not served: \(failure)") }
            }
            stop.whenRequested { signal in
                interrupted.request(signal)
                supervisor.requestShutdown(signal: signal)
            }
            let status = await supervisor.run()
            dashboard.request()
            // A site that ended first (a process given up) ends the day too.
            if !interrupted.isRequested { interrupted.request() }
            return status
        }
        return Outcome(
            status: status, dayFailure: dayFailure.value.withLock { $0 }, interruptedBy: interrupted.signal)
    }

    /// Serves the dashboard until `stop`, and tells its address with a new token; returns why it
    /// could not (the demo goes on without it).
    private func serveDashboard(until stop: StopToken) -> String? {
        do {
            let tokens = try WebTokens(directory: output.webTokens)
            let token = try tokens.issue(name: "demo", role: .therapist)
            let service = WebService(
                WebService.Configuration(
                    process: BusProcessIdentity(bus: bus, name: "web"), host: "127.0.0.1", port: 0,
                    tokens: output.webTokens),
                log: log)
            let tell = self.tell
            try service.run(until: stop) { port in
                tell(
                    "dashboard: open http://127.0.0.1:\(port)/login?token=\(token) in a browser while the demo runs"
                )
            }
            return nil
        } catch {
            return "\(error)"
        }
    }
}
