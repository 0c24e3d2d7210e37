import KinesiaJSON
public import KinesiaSystem

/// How a service run by ``ServiceRunner`` stops, with no I/O: the signals and the passing of
/// time in, what to do out.
///
/// Graceful first: the first SIGINT or SIGTERM asks the service to stop (``Action/requestStop(_:)``)
/// and starts the stop's deadline. The service then has ``deadline`` to finish what it holds
/// (a worker drains its queue and syncs its journal) and return; one that is still running
/// when the deadline passes (``tick(now:)``) ends the process (``Action/forceExit(_:)``): a
/// process asked to stop is gone within a stated bound, whatever its loop is stuck on. A second
/// SIGINT (Control-C twice) ends it at once; repeated SIGTERMs count as one (the kernel's
/// parent-death signal may come several times, see ``ParentDeathSignal``). A service that
/// enforces its own deadlines (the supervisor of `kinesia up`) has none here (`deadline: nil`):
/// only a second Control-C forces its end.
///
/// ```swift
/// var shutdown = ServiceShutdown(deadline: .seconds(10))
/// shutdown.received(.terminate, now: .zero)      // .requestStop(.terminate)
/// shutdown.tick(now: .seconds(10))               // .forceExit("…did not stop within 10 s")
/// ```
public struct ServiceShutdown: Sendable {
    /// What the caller must do.
    public enum Action: Equatable, Sendable {
        /// Nothing.
        case none
        /// Ask the service to stop (set its ``StopToken``), and log it.
        case requestStop(ProcessSignal)
        /// End the service at once, giving the reason: the process with status 1 for a blocking
        /// loop (logged), the service's task cancelled for one that ends under cancellation
        /// (see ``ServiceRunner/ForcedEnd``).
        case forceExit(String)
    }

    private enum State: Sendable {
        case running
        /// Asked to stop at `since`.
        case stopping(since: Duration)
        /// The process is ending.
        case exiting
        /// The service returned: the process ends with the service's own outcome.
        case returned
    }

    /// How long a service asked to stop has to return (`nil`: no limit, the service keeps its
    /// own).
    public let deadline: Duration?
    /// ``deadline``'s default: 10 s. A worker's graceful stop drains for at most 0.5 s, then
    /// writes and syncs its journal (256 files at 64 cameras: a second on a slow disk); under
    /// `kinesia up` the supervisor's SIGKILL, 5 s after its SIGTERM, comes first.
    public static var defaultDeadline: Duration { .seconds(10) }

    private var state = State.running

    /// A service not yet asked to stop.
    /// - Parameter deadline: How long it has to return once asked (`nil`: no limit).
    public init(deadline: Duration? = defaultDeadline) {
        self.deadline = deadline.map { max(.zero, $0) }
    }

    /// When ``tick(now:)`` has something to do: the end of the stop's deadline (`nil` while
    /// running).
    public var stopDeadline: Duration? {
        if case .stopping(let since) = state, let deadline { since + deadline } else { nil }
    }

    /// `signal` arrived at `now`.
    public mutating func received(_ signal: ProcessSignal, now: Duration) -> Action {
        switch state {
        case .running:
            state = .stopping(since: now)
            return .requestStop(signal)
        case .stopping:
            guard signal == .interrupt else { return .none }
            state = .exiting
            return .forceExit("\(signal) again: exiting at once")
        case .exiting, .returned:
            return .none
        }
    }

    /// The service returned: no signal or deadline forces the exit any more (a second
    /// Control-C that comes while the process winds down changes nothing).
    public mutating func serviceReturned() {
        if case .exiting = state { return }
        state = .returned
    }

    /// The passing of time: a service asked to stop that has not returned by its deadline ends
    /// the process.
    public mutating func tick(now: Duration) -> Action {
        guard let end = stopDeadline, let deadline, now >= end else { return .none }
        state = .exiting
        return .forceExit(
            "the service did not stop within \(JSONWriter.compactNumber(deadline.seconds)) s of the request: exiting"
        )
    }
}
