import Foundation

/// Whether the coordinator has a pool session's latest run resume: the session's service tells
/// a new version (a run's first pose, a new pose stream, a hole given up) and waits, boundedly,
/// until the pool worker acknowledges it (the coordinator granted a report that carried it),
/// before it publishes what the change causes. A worker of another box that takes the run over
/// then rebuilds it from what this one published, never from less.
///
/// Live first: the waits are bounded one by one (the caller's bound) and together. A wait that
/// ran out makes the next ones go on at once until the coordinator acknowledges anything (a
/// coordinator away costs one bound, not one a hole); and all the waits take at most
/// ``waitShare`` of the session's time (``WaitBudget``), so that a publisher that leaves holes on
/// purpose, with a coordinator slow to answer on a loaded box, cannot hold the session back.
///
/// Shared by the session's thread (``told()``, ``wait(within:)``) and the pool worker's loop
/// (``acknowledge(_:)``, ``awaits``).
final class ResumeAcknowledgement: @unchecked Sendable {
    /// The most of a session's time its waits take, over time (beyond ``WorkerService/resumeWait``
    /// at once).
    static let waitShare = 0.1

    private let condition = NSCondition()
    private var toldVersion: UInt64 = 0
    private var acknowledgedVersion: UInt64 = 0
    /// A wait ran out and nothing was acknowledged since.
    private var unanswered = false
    private var budget = WaitBudget(capacity: WorkerService.resumeWait, share: waitShare)
    private let clock = ContinuousClock()
    private let origin = ContinuousClock.now

    /// A new version was told: returns it.
    @discardableResult
    func told() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        toldVersion &+= 1
        return toldVersion
    }

    /// The coordinator has `version` (and every earlier one).
    func acknowledge(_ version: UInt64) {
        condition.lock()
        defer { condition.unlock() }
        unanswered = false
        guard version > acknowledgedVersion else { return }
        acknowledgedVersion = version
        condition.broadcast()
    }

    /// Whether a version told is not acknowledged yet.
    var awaits: Bool {
        condition.lock()
        defer { condition.unlock() }
        return acknowledgedVersion < toldVersion
    }

    /// Waits at most `bound` until the latest version told is acknowledged: not at all after a
    /// wait that ran out, until the coordinator acknowledges anything; and no longer than the
    /// session's budget of waits allows (``waitShare`` of its time, at most `bound` at once).
    ///
    /// - Returns: Whether it is.
    func wait(within bound: Duration) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let wanted = toldVersion
        guard acknowledgedVersion < wanted else { return true }
        guard !unanswered else { return false }
        let start = clock.now
        let allowed = budget.allowance(at: origin.duration(to: start), upTo: bound)
        let seconds = Double(allowed.components.seconds) + Double(allowed.components.attoseconds) / 1e18
        let deadline = Date(timeIntervalSinceNow: seconds)
        while acknowledgedVersion < wanted {
            if !condition.wait(until: deadline) { break }
        }
        budget.spend(start.duration(to: clock.now))
        guard acknowledgedVersion >= wanted else {
            unanswered = true
            return false
        }
        return true
    }
}
