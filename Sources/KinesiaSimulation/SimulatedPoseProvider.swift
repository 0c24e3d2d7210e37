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

    /// Creates a provider.
    /// - Parameters:
    ///   - simulator: The simulator.
    ///   - loops: `true` for an endless stream of blocks; `false` for one block.
    ///   - realTime: `true` to yield poses at the pace of their timestamps.
    public init(simulator: ExerciseSimulator, loops: Bool = false, realTime: Bool = false) {
        self.simulator = simulator
        self.loops = loops
        self.realTime = realTime
    }

    /// Creates a provider for the catalog exercise `id`.
    /// - Throws: ``SimulationError`` for an unknown exercise or options out of range.
    public init(
        exerciseID id: String, options: SimulationOptions = SimulationOptions(), loops: Bool = false,
        realTime: Bool = false
    ) throws(SimulationError) {
        self.init(
            simulator: try ExerciseSimulator(exerciseID: id, options: options), loops: loops,
            realTime: realTime)
    }

    /// What one block contains (every block of a loop has the same shape, its own numbers).
    public var truth: SimulationTruth { simulator.truth }

    /// The poses: made on demand; the stream ends after one block unless the provider loops.
    public func poses() -> AsyncStream<Pose> {
        let state = StreamState(loops ? simulator.endless() : simulator.poses())
        let realTime = realTime
        return AsyncStream(unfolding: {
            guard let (pose, delay) = state.next(realTime: realTime) else { return nil }
            if let delay, delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return nil }
            }
            return pose
        })
    }
}

/// The stream's iterator behind a lock, with the clock that paces it.
private final class StreamState: Sendable {
    private struct Inner {
        var stream: SimulationStream
        var origin: (clock: ContinuousClock.Instant, timestamp: Double)?
    }

    private let inner: Mutex<Inner>

    init(_ stream: SimulationStream) {
        inner = Mutex(Inner(stream: stream))
    }

    /// The next pose and, when paced, how long to wait before handing it out.
    func next(realTime: Bool) -> (Pose, Duration?)? {
        inner.withLock { inner in
            guard let pose = inner.stream.next() else { return nil }
            guard realTime else { return (pose, nil) }
            let now = ContinuousClock.now
            guard let origin = inner.origin else {
                inner.origin = (now, pose.timestamp)
                return (pose, nil)
            }
            let due = origin.clock + .seconds(pose.timestamp - origin.timestamp)
            return (pose, now < due ? now.duration(to: due) : nil)
        }
    }
}
