public import KinesiaSystem
import Synchronization

/// A manual clock that counts the reads of its time: a wait on another thread has started once
/// it read it, and has seen an advance once it read it again.
///
/// ```swift
/// let clock = ReadCountingClock()
/// // another thread: child.waitForExit(timeout: .seconds(5), clock: clock)
/// clock.waitForReads(2)   // the wait has fixed its deadline
/// clock.base.advance(by: .seconds(5))
/// ```
public final class ReadCountingClock: Clock, Sendable {
    /// The clock moved by the test.
    public let base = ManualClock()
    private let count = Atomic<Int>(0)

    /// A clock at its start, read no time yet.
    public init() {}

    /// How many times ``now`` was read.
    public var reads: Int { count.load(ordering: .acquiring) }

    public var now: ManualClock.Instant {
        count.add(1, ordering: .acquiringAndReleasing)
        return base.now
    }

    public var minimumResolution: Duration { base.minimumResolution }

    public func sleep(until deadline: ManualClock.Instant, tolerance: Duration? = nil) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }

    /// Blocks until ``reads`` reaches `count`, or for at most `limit` of real time.
    /// - Returns: Whether it did.
    @discardableResult
    public func waitForReads(_ count: Int, limit: Duration = .seconds(10)) -> Bool {
        let real = ContinuousClock()
        let deadline = real.now.advanced(by: limit)
        while reads < count, real.now < deadline { ThreadSleep.sleep(.milliseconds(5)) }
        return reads >= count
    }
}
