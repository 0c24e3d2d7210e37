import Foundation

/// Whether the coordinator has a pool session's latest run resume: the session's service tells
/// a new version (a run's first pose, a new pose stream, a hole given up) and waits, boundedly,
/// until the pool worker acknowledges it (the coordinator granted a report that carried it),
/// before it publishes what the change causes. A worker of another box that takes the run over
/// then rebuilds it from what this one published, never from less.
///
/// Shared by the session's thread (``told()``, ``wait(within:)``) and the pool worker's loop
/// (``acknowledge(_:)``, ``awaits``).
final class ResumeAcknowledgement: @unchecked Sendable {
    private let condition = NSCondition()
    private var toldVersion: UInt64 = 0
    private var acknowledgedVersion: UInt64 = 0

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

    /// Waits at most `bound` until the latest version told is acknowledged.
    ///
    /// - Returns: Whether it is.
    func wait(within bound: Duration) -> Bool {
        let seconds = Double(bound.components.seconds) + Double(bound.components.attoseconds) / 1e18
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        let wanted = toldVersion
        while acknowledgedVersion < wanted {
            if !condition.wait(until: deadline) { return acknowledgedVersion >= wanted }
        }
        return true
    }
}
