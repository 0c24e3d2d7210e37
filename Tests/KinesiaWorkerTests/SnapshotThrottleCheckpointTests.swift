import KinesiaMotion
import Testing

@testable import KinesiaWorker

/// A snapshot throttle read back from a checkpoint decides as the one it was taken from.
struct SnapshotThrottleCheckpointTests {
    /// 4 s at 60 poses a second (times that are not binary fractions), a rep every 50 poses.
    private static let steps: [(reps: Int, rejected: Int, t: Double)] = (0..<240).map {
        (frame: Int) -> (reps: Int, rejected: Int, t: Double) in
        (frame / 50, frame / 70, Double(frame) / 60 + 0.1 + 0.2)
    }

    @Test(arguments: [0, 1, 2, 37, 50, 51, 120, 239])
    func aThrottleReadBackDecidesAsTheOriginal(_ split: Int) throws {
        var uninterrupted = SnapshotThrottle(rate: 15)
        let expected = Self.steps.map {
            uninterrupted.shouldPublish(repCount: $0.reps, rejectedCount: $0.rejected, at: $0.t)
        }
        var throttle = SnapshotThrottle(rate: 15)
        for step in Self.steps[..<split] {
            _ = throttle.shouldPublish(repCount: step.reps, rejectedCount: step.rejected, at: step.t)
        }
        let bytes = try CheckpointCodec.encode(throttle)
        var restored = try CheckpointCodec.decode(SnapshotThrottle.self, from: bytes)
        #expect(restored == throttle)
        let decisions = Self.steps[split...].map {
            restored.shouldPublish(repCount: $0.reps, rejectedCount: $0.rejected, at: $0.t)
        }
        #expect(decisions == Array(expected[split...]))
        #expect(expected.contains(false) && expected.contains(true))
    }
}
