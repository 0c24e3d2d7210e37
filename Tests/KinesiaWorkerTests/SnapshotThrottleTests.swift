import Testing

@testable import KinesiaWorker

/// When a worker publishes a snapshot: the first, then at most the rate per second of pose
/// time, and every change of the rep counts.
struct SnapshotThrottleTests {
    @Test func publishesTheFirstThenAtMostFifteenASecondOfPoseTime() {
        var throttle = SnapshotThrottle(rate: 15)
        var published: [Double] = []
        for frame in 0..<60 {
            let t = Double(frame) / 60
            if throttle.shouldPublish(repCount: 0, rejectedCount: 0, at: t) { published.append(t) }
        }
        #expect(published.count == 15)
        #expect(published.first == 0)
        for (a, b) in zip(published, published.dropFirst()) { #expect(b - a >= 1.0 / 15 - 1e-6) }
    }

    @Test func aCountChangeIsAlwaysPublished() {
        var throttle = SnapshotThrottle(rate: 15)
        let steps: [(reps: Int, rejected: Int, t: Double)] = [
            (0, 0, 1.0), (0, 0, 1.01), (1, 0, 1.02), (1, 1, 1.03), (1, 1, 1.04),
        ]
        let published = steps.map {
            throttle.shouldPublish(repCount: $0.reps, rejectedCount: $0.rejected, at: $0.t)
        }
        #expect(published == [true, false, true, true, false])
    }
}
