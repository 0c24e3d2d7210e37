/// One of the demo day's bounded waits as a value, the time passed in: a session's start asked
/// again while the pool's worker has not joined, a patient's camera playing its share of the
/// time, the record's run ends awaited (``DemoDay``).
///
/// ```swift
/// let wait = DemoWait(limit: .seconds(10), startedAt: clock.now)
/// while !wait.isOver(at: clock.now) { poll() }
/// ```
struct DemoWait: Hashable, Sendable {
    /// How long the wait lasts.
    let limit: Duration
    /// When it is over, on the caller's clock.
    let deadline: Duration

    /// A wait of `limit` from `now`.
    init(limit: Duration, startedAt now: Duration) {
        self.limit = limit
        deadline = now + limit
    }

    /// Whether the wait is over at `now`: from the deadline on.
    func isOver(at now: Duration) -> Bool {
        now >= deadline
    }
}
