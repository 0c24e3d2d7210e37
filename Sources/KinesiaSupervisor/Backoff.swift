/// The restart budget of one child: exponential back-off and a limit within a sliding window.
///
/// The delay before a restart is `initialDelay × 2^n`, capped at `maxDelay`, where `n` is the
/// number of restarts already made within the last `window`; once `maxRestarts` restarts fall
/// within the window, the next exit gives up. A child that stays up longer than the window
/// therefore starts again from the initial delay. Time is a `Duration` since the supervisor
/// started, so the arithmetic is pure and tests drive it with any values.
///
/// ```swift
/// var backoff = Backoff(limits: RestartLimits(initialDelay: .seconds(1), maxDelay: .seconds(3),
///                                             maxRestarts: 3, window: .seconds(60)))
/// backoff.nextRestart(at: .seconds(0))    // .restart(after: 1 s, number: 1)
/// backoff.nextRestart(at: .seconds(2))    // .restart(after: 2 s, number: 2)
/// backoff.nextRestart(at: .seconds(5))    // .restart(after: 3 s, number: 3)  (capped)
/// backoff.nextRestart(at: .seconds(9))    // .giveUp(restarts: 3)
/// ```
public struct Backoff: Hashable, Sendable {
    /// What to do about a child that just exited and whose policy asks for a restart.
    public enum Decision: Hashable, Sendable {
        /// Start it again after `delay`; this is restart `number` within the window.
        case restart(after: Duration, number: Int)
        /// The window already holds `restarts` restarts: stop trying.
        case giveUp(restarts: Int)
    }

    /// The limits in force.
    public let limits: RestartLimits
    /// When the restarts still inside the window were decided, oldest first.
    public private(set) var restartTimes: [Duration] = []

    /// Creates an empty budget.
    public init(limits: RestartLimits) {
        self.limits = limits
    }

    /// Decides about an exit at `now` and, for a restart, counts it.
    ///
    /// - Parameter now: The time of the exit, since the supervisor started.
    /// - Returns: The delay and number of the restart, or `.giveUp`.
    public mutating func nextRestart(at now: Duration) -> Decision {
        restartTimes.removeAll { now - $0 >= limits.window }
        let count = restartTimes.count
        guard count < limits.maxRestarts else { return .giveUp(restarts: count) }
        restartTimes.append(now)
        return .restart(after: delay(forRestartsInWindow: count), number: count + 1)
    }

    /// `initialDelay × 2^count`, capped at `maxDelay` (without overflowing for large counts).
    public func delay(forRestartsInWindow count: Int) -> Duration {
        var delay = limits.initialDelay
        for _ in 0..<count {
            guard delay < limits.maxDelay else { break }
            delay = delay * 2
        }
        return min(delay, limits.maxDelay)
    }
}
