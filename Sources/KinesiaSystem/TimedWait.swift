/// A wait with a time limit, decided with the time passed in: the shell reads its clock (the
/// system's, or a ``ManualClock`` in a test) and asks how long is left.
///
/// The waits of a blocking loop (a child's exit, a subscriber's arrival) keep their mechanism
/// (a condition, a poll) and take only the decision from here, so a manual clock times them in
/// a test without anyone waiting for the limit.
///
/// ```swift
/// let elapsed = ElapsedClock(clock)
/// let wait = TimedWait(limit: .seconds(5), startedAt: elapsed.now)
/// while let remaining = wait.remaining(at: elapsed.now), !isDone() {
///     poll(timeout: min(remaining, .milliseconds(50)))
/// }
/// ```
public struct TimedWait: Hashable, Sendable {
    /// How long the wait lasts at most.
    public let limit: Duration
    /// When it is over, on the caller's clock.
    public let deadline: Duration

    /// A wait of `limit` (zero for a negative one) from `now`.
    public init(limit: Duration, startedAt now: Duration) {
        self.limit = max(.zero, limit)
        deadline = now + self.limit
    }

    /// The time left at `now`; `nil` from the deadline on: the wait is over.
    public func remaining(at now: Duration) -> Duration? {
        now < deadline ? deadline - now : nil
    }
}
