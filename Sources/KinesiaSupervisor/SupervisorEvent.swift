public import KinesiaSystem

/// Something the supervisor did or saw: one line of `kinesia up`'s standard error each.
///
/// ```text
/// kinesia up: started broker (pid 4242)
/// kinesia up: exited left (pid 4250, status 1)
/// kinesia up: restarting left in 0.4 s (restart 2 of at most 5 within 60 s)
/// kinesia up: giving up on left after 5 restarts within 60 s
/// kinesia up: shutting down (SIGTERM): stopping intake, then workers, consumers and brokers
/// kinesia up: stopping ingest (pid 4260) with SIGTERM
/// kinesia up: killing ingest (pid 4260) with SIGKILL: still running 5 s after SIGTERM
/// kinesia up: stopped every process; exit status 0
/// ```
public enum SupervisorEvent: Hashable, Sendable, CustomStringConvertible {
    /// The process runs.
    case started(name: String, pid: Int32)
    /// The process could not be started at all.
    case failedToStart(name: String, reason: String)
    /// The process ended.
    case exited(name: String, pid: Int32, status: TerminationStatus)
    /// The process ended and its restart policy does not start it again.
    case notRestarting(name: String, policy: RestartPolicy)
    /// The process ended with status 64, a usage error: its command line is wrong, and
    /// restarting it would fail the same way.
    case usageError(name: String)
    /// The process will be started again after `delay`; this is restart `number` of at most
    /// `limit` within `window`.
    case restarting(name: String, delay: Duration, number: Int, limit: Int, window: Duration)
    /// The process died too often: it stays down.
    case gaveUp(name: String, restarts: Int, window: Duration)
    /// The graceful shutdown begins.
    case shuttingDown(reason: ShutdownReason)
    /// A second shutdown request (a second SIGINT for `kinesia up`): every remaining process
    /// gets SIGKILL now.
    case forcingShutdown
    /// A stop signal went to the process's group.
    case stopping(name: String, pid: Int32, signal: ProcessSignal)
    /// The process outlived the deadline after SIGTERM and gets SIGKILL.
    case killing(name: String, pid: Int32, deadline: Duration)
    /// Every process has stopped; `kinesia up` exits with `exitStatus`.
    case finished(exitStatus: Int32)

    /// Why the supervisor shuts down.
    public enum ShutdownReason: Hashable, Sendable, CustomStringConvertible {
        /// A signal (`SIGTERM`, `SIGINT`...) or a request through ``Supervisor/requestShutdown(signal:)``.
        case requested(ProcessSignal?)
        /// The named broker stopped for good: nothing can work without it.
        case brokerStopped(name: String)

        /// `SIGTERM`, `shutdown requested` or `X, a broker, stopped for good`.
        public var description: String {
            switch self {
            case .requested(let signal?): "\(signal)"
            case .requested(nil): "shutdown requested"
            case .brokerStopped(let name): "\(name), a broker, stopped for good"
            }
        }
    }

    /// The line `kinesia up` prints (without its `kinesia up: ` prefix).
    public var description: String {
        switch self {
        case .started(let name, let pid):
            "started \(name) (pid \(pid))"
        case .failedToStart(let name, let reason):
            "failed to start \(name): \(reason)"
        case .exited(let name, let pid, let status):
            "exited \(name) (pid \(pid), \(status))"
        case .notRestarting(let name, let policy):
            "not restarting \(name) (restart: \(policy.rawValue))"
        case .usageError(let name):
            "not restarting \(name): status 64 is a usage error, fix its command in the topology"
        case .restarting(let name, let delay, let number, let limit, let window):
            "restarting \(name) in \(Self.seconds(delay)) (restart \(number) of at most \(limit) "
                + "within \(Self.seconds(window)))"
        case .gaveUp(let name, let restarts, let window):
            "giving up on \(name) after \(restarts) restart\(restarts == 1 ? "" : "s") within \(Self.seconds(window))"
        case .shuttingDown(let reason):
            "shutting down (\(reason)): stopping intake, then workers, consumers and brokers"
        case .forcingShutdown:
            "second shutdown request: killing every process now"
        case .stopping(let name, let pid, let signal):
            "stopping \(name) (pid \(pid)) with \(signal)"
        case .killing(let name, let pid, let deadline):
            "killing \(name) (pid \(pid)) with SIGKILL: still running \(Self.seconds(deadline)) after SIGTERM"
        case .finished(let exitStatus):
            "stopped every process; exit status \(exitStatus)"
        }
    }

    /// `0.4 s`, `5 s`, `1.25 s` (to the millisecond).
    static func seconds(_ duration: Duration) -> String {
        let (whole, attoseconds) = duration.components
        let milliseconds = whole * 1000 + (attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000
        let fraction = milliseconds % 1000
        guard fraction != 0 else { return "\(milliseconds / 1000) s" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(milliseconds / 1000).\(digits) s"
    }
}
