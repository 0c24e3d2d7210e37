/// The time elapsed since a value was made, read on a clock given to it (`ContinuousClock` in a
/// process, ``ManualClock`` in a test): what a shell passes to its state machines as `now`.
///
/// Any `Clock` whose durations are `Duration` will do; the clock is kept behind a closure, so a
/// non-generic type can store one.
///
/// ```swift
/// let elapsed = ElapsedClock(ContinuousClock())
/// machine.tick(now: elapsed.now)
/// ```
public struct ElapsedClock: Sendable {
    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Starts counting now on `clock`.
    public init(_ clock: some Clock<Duration>) {
        if let continuous = clock as? ContinuousClock {
            // The process's clock read without going through `Clock` generically (each read
            // looked its instant's type up at run time: loops read it once a message).
            let origin = ContinuousClock.now
            read = { origin.duration(to: ContinuousClock.now) }
            sleeper = { try await continuous.sleep(until: origin.advanced(by: $0), tolerance: nil) }
            return
        }
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// Sleeps until ``now`` reaches `elapsed` (at once when it has): a deadline fixed when it
    /// is computed, however late the sleeping task starts.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(until elapsed: Duration) async throws {
        try await sleeper(elapsed)
    }

    /// The time since this value was made.
    public var now: Duration { read() }

    /// ``now`` in seconds.
    public var seconds: Double { now.seconds }
}
