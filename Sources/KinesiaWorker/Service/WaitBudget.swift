/// How long a live loop may still wait for something that is not analysis (a pool session
/// waiting for the coordinator to have its run's resume): at most ``capacity`` at once, and over
/// time at most ``share`` of the time that passes, so that however often the waits come (a
/// publisher that leaves holes on purpose, a coordinator slow to answer on a loaded box), the
/// loop spends at least the rest of its time live.
///
/// A value, with the time passed in (any fixed origin).
///
/// ```swift
/// var budget = WaitBudget(capacity: .milliseconds(250), share: 0.1)
/// let bound = budget.allowance(at: now, upTo: .milliseconds(250))
/// let waited = wait(within: bound)
/// budget.spend(waited)
/// ```
struct WaitBudget: Sendable, Hashable {
    /// The most waiting that can be had at once.
    let capacity: Duration
    /// The share of the time passed that is given back for waiting (0 to 1).
    let share: Double
    private var available: Duration
    private var lastRefill: Duration?

    /// A full budget.
    init(capacity: Duration, share: Double) {
        self.capacity = capacity
        self.share = min(max(share, 0), 1)
        available = capacity
    }

    /// How long a wait that wants `wanted` may last at `now`: what the budget holds (refilled by
    /// ``share`` of the time since the last call, at most ``capacity``), at most `wanted`.
    mutating func allowance(at now: Duration, upTo wanted: Duration) -> Duration {
        if let lastRefill, now > lastRefill {
            available = min(capacity, available + (now - lastRefill) * share)
        }
        lastRefill = max(now, lastRefill ?? now)
        return max(.zero, min(wanted, available))
    }

    /// Takes `waited` from the budget.
    mutating func spend(_ waited: Duration) {
        available = max(.zero, available - max(.zero, waited))
    }
}
