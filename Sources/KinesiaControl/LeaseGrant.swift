/// The coordinator's answer to a pool worker's numbered heartbeat (``WorkerReport/number``):
/// the worker may go on hosting its sessions for ``lease`` from the moment it *sent* that
/// report.
///
/// The coordinator takes a worker for gone when it has heard nothing from it for the same
/// lease, counted from the moment it *received* its last report, which is later: so the
/// worker's own lease always ends first (``WorkerLease``), and a worker paused or cut off past
/// its lease has stopped publishing for its sessions before any other worker is given them.
public struct LeaseGrant: Hashable, Sendable {
    /// The number of the report it answers.
    public var report: UInt64
    /// How long the worker holds its sessions after sending that report.
    public var lease: Duration

    /// A grant.
    public init(report: UInt64, lease: Duration) {
        self.report = report
        self.lease = lease
    }

    /// The lease in whole milliseconds (as the message carries it).
    var milliseconds: Int64 {
        lease.components.seconds * 1000 + lease.components.attoseconds / 1_000_000_000_000_000
    }
}
