public import KinesiaMotion
import Synchronization

/// A ``PoseProvider`` over the simulator: one block of reps, or an endless loop of blocks.
///
/// Poses are made lazily as the consumer asks for them (the stream has no buffer to fill), as
/// fast as it reads them or, with `realTime`, at the poses' own pace.
///
/// ```swift
/// let provider = try SimulatedPoseProvider(exerciseID: "squat", options: SimulationOptions(seed: 7))
/// let session = MotionSession(exercise: .squat, side: .left)
/// await session.run(with: provider)
/// ```
public struct SimulatedPoseProvider: PoseProvider {
    /// The simulator.
    public let simulator: ExerciseSimulator
    /// Whether blocks of reps follow one another forever.
    public let loops: Bool
    /// Whether poses come at their timestamps' pace (like a camera) rather than at once.
    public let realTime: Bool

    /// The clock a real-time provider is paced on.
    private let clock: PacingClock

    /// Creates a provider.
    /// - Parameters:
    ///   - simulator: The simulator.
    ///   - loops: `true` for an endless stream of blocks; `false` for one block.
    ///   - realTime: `true` to yield poses at the pace of their timestamps.
    ///   - clock: What the pace is timed on, with `realTime` (the system's clock; a manual one
    ///     in tests).
    public init(
        simulator: ExerciseSimulator, loops: Bool = false, realTime: Bool = false,
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.simulator = simulator
        self.loops = loops
        self.realTime = realTime
        self.clock = PacingClock(clock)
    }

    /// Creates a provider for the catalog exercise `id`.
    /// - Parameter clock: What the pace is timed on, with `realTime`.
    /// - Throws: ``SimulationError`` for an unknown exercise or options out of range.
    public init(
        exerciseID id: String, options: SimulationOptions = SimulationOptions(), loops: Bool = false,
        realTime: Bool = false, clock: some Clock<Duration> = ContinuousClock()
    ) throws(SimulationError) {
        self.init(
            simulator: try ExerciseSimulator(exerciseID: id, options: options), loops: loops,
            realTime: realTime, clock: clock)
    }

    /// What one block contains (every block of a loop has the same shape, its own numbers).
    public var truth: SimulationTruth { simulator.truth }

    /// The poses: made on demand; the stream ends after one block unless the provider loops.
    /// With `realTime`, each pose is handed out when its time has come on the provider's clock
    /// (``RealTimePace``).
    public func poses() -> AsyncStream<Pose> {
        let state = StreamState(loops ? simulator.endless() : simulator.poses())
        let realTime = realTime
        let clock = clock
        return AsyncStream(unfolding: {
            guard realTime else { return state.next() }
            guard let (pose, due) = state.next(now: clock.now) else { return nil }
            do { try await clock.sleep(until: due) } catch { return nil }
            return pose
        })
    }
}

/// Real-time pacing as a value, the time passed in: the first pose is due at once, each next
/// one when as much time has passed since the first as between their timestamps.
///
/// ```swift
/// var pace = RealTimePace()
/// let due = pace.due(timestamp: pose.timestamp, now: elapsed)
/// ```
struct RealTimePace: Hashable, Sendable {
    /// The time the first pose was handed out.
    private var originTime: Duration?
    /// The first pose's timestamp.
    private var originTimestamp = 0.0

    /// When the pose stamped `timestamp` is due, on the clock `now` is read on (`now` for the
    /// first; a time already past is handed out at once).
    mutating func due(timestamp: Double, now: Duration) -> Duration {
        guard let originTime else {
            originTime = now
            originTimestamp = timestamp
            return now
        }
        return originTime + .seconds(timestamp - originTimestamp)
    }
}

/// The time since it was made, and sleeps until a time, on a clock given to it (kept behind
/// closures, so the provider is not generic).
private struct PacingClock: Sendable {
    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    init(_ clock: some Clock<Duration>) {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// The time since this value was made.
    var now: Duration { read() }

    /// Sleeps until ``now`` reaches `time` (at once when it has).
    func sleep(until time: Duration) async throws {
        guard time > now else { return }
        try await sleeper(time)
    }
}

/// The stream's iterator behind a lock, with the pace of a real-time stream.
private final class StreamState: Sendable {
    private struct Inner {
        var stream: SimulationStream
        var pace = RealTimePace()
    }

    private let inner: Mutex<Inner>

    init(_ stream: SimulationStream) {
        inner = Mutex(Inner(stream: stream))
    }

    /// The next pose, at once.
    func next() -> Pose? {
        inner.withLock { $0.stream.next() }
    }

    /// The next pose and when it is due, `now` being the time on the pacing clock.
    func next(now: Duration) -> (Pose, due: Duration)? {
        inner.withLock { inner in
            guard let pose = inner.stream.next() else { return nil }
            return (pose, inner.pace.due(timestamp: pose.timestamp, now: now))
        }
    }
}
