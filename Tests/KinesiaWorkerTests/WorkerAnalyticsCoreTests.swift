import KinesiaAnalytics
import KinesiaClient
import KinesiaMotion
import KinesiaSimulation
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// An analytics session in the worker core: the records of ``MotionAnalytics`` on its event
/// topic, no snapshot, the final set summaries at ``WorkerCore/finish(into:)``.
struct WorkerAnalyticsCoreTests {
    static func poses() throws -> [Pose] {
        var options = SimulationOptions(seed: 3)
        options.sides = .together
        return try ExerciseSimulator(exercise: .squat, options: options).run().poses
    }

    @Test func anAnalyticsSessionPublishesWhatMotionAnalyticsFindsAndNoSnapshot() throws {
        let poses = try Self.poses()
        var core = try WorkerCore(
            sessions: [try WorkerSession(spec: "cam0/analytics=squat:analytics")],
            snapshotRate: 15)
        var tracker = SequenceTracker<Topic>()
        let topic = try Topic.pose(camera: "cam0")
        var actions: [WorkerCore.Action] = []
        var published: [WorkerCore.Publication] = []
        for (index, pose) in poses.enumerated() {
            let header = WireHeader(kind: .pose, streamID: StreamID(1), sequence: UInt64(index), sentAt: 0)
            core.receive(
                FlatPose(pose), on: topic, header: header, sequence: tracker.record(header, on: topic),
                into: &actions)
            for case .publish(let publication) in actions { published.append(publication) }
        }
        core.finish(into: &actions)
        for case .publish(let publication) in actions { published.append(publication) }

        var reference = MotionAnalytics(exercise: .squat)
        var expected: [String] = []
        for pose in poses {
            expected += reference.process(pose).map { AnalyticsJSON.encode($0, at: pose.timestamp) }
        }
        let end = try #require(poses.last?.timestamp)
        expected += reference.finish().map { AnalyticsJSON.encode($0, at: end) }

        #expect(expected.contains { $0.contains("\"complete\":true") })
        #expect(published.map(\.json) == expected)
        #expect(published.allSatisfy { $0.kind == .event && $0.topic.string == "event/cam0/analytics/" })
    }
}
