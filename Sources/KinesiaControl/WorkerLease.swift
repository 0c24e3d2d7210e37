/// A pool worker's own view of its lease, with no clock and no I/O (time passed in): until
/// when it may publish for the sessions it hosts.
///
/// Each report it sends is numbered and its sending time kept; a ``LeaseGrant`` for a report
/// holds the sessions until that report's sending time plus the lease. The coordinator counts
/// the same lease from the report's arrival, later, so the worker always lets go first. A
/// worker that is paused (SIGSTOP), hung, or cut off from the coordinator finds its lease
/// lapsed when it runs again and stops its sessions before it publishes anything: the
/// coordinator may have given them to another worker meanwhile.
///
/// ```swift
/// var lease = WorkerLease()
/// let number = lease.reportSent(at: now)       // into the WorkerReport
/// lease.granted(grant)                          // the coordinator's answer
/// if !lease.holds(at: now) { /* stop every session */ }
/// ```
public struct WorkerLease: Hashable, Sendable {
    /// The reports sent and not answered yet, oldest first (at most ``remembered``).
    private var sent: [Sent] = []
    private var nextNumber: UInt64 = 1
    /// Until when the sessions are held (`nil`: never granted).
    public private(set) var heldUntil: Duration?
    /// How many unanswered reports are remembered (a coordinator away for a minute).
    static let remembered = 64

    private struct Sent: Hashable, Sendable {
        var number: UInt64
        var at: Duration
    }

    /// A worker that holds nothing yet.
    public init() {}

    /// Notes a report sent at `now`.
    ///
    /// - Returns: Its number, for ``WorkerReport/number``.
    public mutating func reportSent(at now: Duration) -> UInt64 {
        let number = nextNumber
        nextNumber += 1
        sent.append(Sent(number: number, at: now))
        if sent.count > Self.remembered { sent.removeFirst(sent.count - Self.remembered) }
        return number
    }

    /// Takes the coordinator's grant.
    ///
    /// - Returns: Whether it extended the lease (a grant for a report it never sent, or
    ///   forgot, extends nothing).
    @discardableResult
    public mutating func granted(_ grant: LeaseGrant) -> Bool {
        guard let index = sent.firstIndex(where: { $0.number == grant.report }) else { return false }
        let until = sent[index].at + grant.lease
        // Answers to older reports are never coming (the coordinator answers in order).
        sent.removeFirst(index + 1)
        if let heldUntil, until <= heldUntil { return false }
        heldUntil = until
        return true
    }

    /// Whether the sessions are held at `now`.
    public func holds(at now: Duration) -> Bool {
        heldUntil.map { now < $0 } ?? false
    }

    /// Gives the lease up at once (a worker that found it lapsed: only a new grant holds
    /// again, for a report sent after now).
    public mutating func lapse() {
        heldUntil = nil
        sent.removeAll()
    }

    /// How long since the oldest report not answered was sent (`nil`: every report answered).
    public func unansweredFor(at now: Duration) -> Duration? {
        sent.first.map { now - $0.at }
    }
}
