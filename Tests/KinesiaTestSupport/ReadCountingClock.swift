import Foundation
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

    /// What ``probe(limit:justBefore:_:)`` saw of a wait.
    public struct Probe<Result: Sendable>: Sendable {
        /// Whether the wait had read the clock a millisecond before its limit and still waited.
        public var waitingJustBefore: Bool
        /// What the wait returned once the clock reached its limit (`nil`: it did not end within
        /// 10 s of real time).
        public var result: Result?
    }

    /// Runs `wait` (a blocking wait timed on this clock) on a thread of its own; once it has
    /// fixed its deadline, moves the clock to a millisecond before `limit`, checks it still
    /// waits (then runs `justBefore`), and moves it to `limit`.
    public func probe<Result: Sendable>(
        limit: Duration, justBefore: () -> Void = {}, _ wait: @escaping @Sendable () -> Result
    ) -> Probe<Result> {
        let ended = Mutex<(done: Bool, result: Result?)>((false, nil))
        let thread = Thread {
            let result = wait()
            ended.withLock { $0 = (true, result) }
        }
        thread.start()
        waitForReads(2)  // the wait has fixed its deadline (its clock's origin, then its start)
        base.advance(by: limit - .milliseconds(1))
        waitForReads(reads + 2)  // read again since the advance
        let waitingJustBefore = !ended.withLock { $0.done }
        justBefore()
        base.advance(by: .milliseconds(1))
        let real = ContinuousClock()
        let deadline = real.now.advanced(by: .seconds(10))
        while !ended.withLock({ $0.done }), real.now < deadline { ThreadSleep.sleep(.milliseconds(10)) }
        return ended.withLock {
            Probe(waitingJustBefore: waitingJustBefore, result: $0.done ? $0.result : nil)
        }
    }
}
