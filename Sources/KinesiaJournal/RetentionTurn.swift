/// Whether a process sharing a journal store takes its turn at a scan due by time, as a value:
/// the end of the store's last scan and the wall clock's time are passed in.
///
/// A scan covers the whole store, so the last one, by whichever process, stands for every
/// other's until ``interval`` has passed since it ended (``JournalStore/retentionTurnName``).
/// A last scan in the future (a wall clock set back) does not hold the turn.
///
/// ```swift
/// let rule = RetentionTurn(interval: .seconds(10))
/// rule.isTaken(lastScanEnded: .seconds(100), now: .seconds(105))  // false: another's scan stands
/// rule.isTaken(lastScanEnded: .seconds(100), now: .seconds(110))  // true
/// ```
struct RetentionTurn: Hashable, Sendable {
    /// The shortest time between two scans by time (``JournalPolicy/retentionInterval``).
    let interval: Duration

    /// Whether to scan at `now`, the last scan having ended at `lastScanEnded` (`nil`: none is
    /// recorded), both as durations since the epoch.
    func isTaken(lastScanEnded: Duration?, now: Duration) -> Bool {
        guard let lastScanEnded else { return true }
        let sinceLast = now - lastScanEnded
        return !(sinceLast >= .zero && sinceLast < interval)
    }
}
