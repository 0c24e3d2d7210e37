/// Emits a change of a state (a bit mask) only after the new state has held continuously for a
/// delay; a state that flickers back resets the wait.
struct Debouncer: Sendable, Hashable, Codable {
    /// The state last emitted.
    private(set) var current: UInt32
    private var pending: UInt32 = 0
    private var pendingSince: Double?

    init(current: UInt32) {
        self.current = current
    }

    /// Observes `state` at `time`; returns `true` when it becomes the current state.
    mutating func observe(_ state: UInt32, at time: Double, after delay: Double) -> Bool {
        guard state != current else {
            pendingSince = nil
            return false
        }
        let since: Double
        if let pendingSince, pending == state {
            since = pendingSince
        } else {
            pending = state
            pendingSince = time
            since = time
        }
        guard time - since >= delay else { return false }
        current = state
        pendingSince = nil
        return true
    }

    /// Forgets a pending change (its state was not observed continuously).
    mutating func interrupt() {
        pendingSince = nil
    }
}
