public import KinesiaSystem
import Synchronization

/// What lets a pool worker's sessions publish: the worker's lease (``WorkerLease``) as its
/// control loop last learned it, read by each session's thread before it publishes or
/// journals anything.
///
/// A worker paused past its lease (SIGSTOP, a hang) runs every thread again at once when it
/// resumes; its sessions may read their queued poses before its control loop reads anything.
/// The fence needs no one to close it: its deadline has passed by then, so the sessions find it
/// closed on their own clock and stop without publishing (``WorkerService`` counts
/// `fenced`), whatever the coordinator decided meanwhile.
///
/// ```swift
/// let fence = SessionFence(clock: elapsed)
/// fence.hold(until: lease.heldUntil)    // the control loop, at every grant
/// guard fence.holds else { return }     // a session, before it publishes
/// ```
public final class SessionFence: Sendable {
    private let clock: ElapsedClock
    /// The deadline in nanoseconds on ``clock`` (`Int64.min`: not held).
    private let deadline = Atomic<Int64>(.min)

    /// A fence that holds nothing yet, timed on `clock` (the worker's).
    public init(clock: ElapsedClock) {
        self.clock = clock
    }

    /// Holds the sessions until `deadline` on the clock (`nil`: not at all).
    public func hold(until deadline: Duration?) {
        self.deadline.store(deadline.map(Self.nanoseconds) ?? .min, ordering: .sequentiallyConsistent)
    }

    /// Whether the sessions may publish now.
    public var holds: Bool {
        Self.nanoseconds(clock.now) < deadline.load(ordering: .sequentiallyConsistent)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
