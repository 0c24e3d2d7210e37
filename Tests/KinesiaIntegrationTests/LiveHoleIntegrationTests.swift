import Foundation
import Glibc
import KinesiaBus
import KinesiaCLI
import KinesiaClient
import KinesiaIngest
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// A journaling worker (the default) fed by a user's own publisher, written from the wire
/// format: no journal, no replay server, no heartbeat, and holes in its sequence numbers. The
/// worker must stay live: every pose that arrives is analysed, at once, and the events are
/// those of `kinesia analyze` on exactly the poses that arrived.
@Suite(.serialized, .tags(.process))
struct LiveHoleIntegrationTests {
    @Test func aPublisherWithHolesAndNoReplayIsAnalysedLiveAndCompletely() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let poses = try PoseSource.load("sim:squat,seed=3,reps=4")
        // 5 sequence numbers skipped every 100 poses.
        let skipped = Set(poses.indices.filter { $0 % 100 >= 95 })
        let sentPoses = poses.indices.filter { !skipped.contains($0) }.map { poses[$0] }
        let file = topology.directory + "/sent.jsonl"
        try (sentPoses.map(PoseJSONLine.encode).joined(separator: "\n") + "\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let expected = try await Oracle.events(source: file, exercise: "squat", side: "left")
        #expect(expected.contains { $0.contains("repCompleted") })

        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus)
        let listener = try await topology.startListener(
            "listen", ["event/cam0/", "--format", "json", "--count", String(expected.count)])
        let worker = try await topology.startWorker(
            "worker",
            ["--camera", "cam0", "--session", "s=squat:left", "--state", topology.directory + "/state"])
        let context = try ZMQContext()
        defer { context.terminate() }
        let publisher = try BusPublisher(
            context: context, bus: try BusAddress(parsing: topology.bus), connectionTimeout: .seconds(5))
        defer { publisher.close() }
        let topic = try Topic.pose(camera: "cam0")
        try await Task.sleep(for: .milliseconds(500))  // the worker's subscription reaches the broker
        let stream = StreamID(0x5EED)
        for (index, pose) in poses.enumerated() where !skipped.contains(index) {
            publisher.continueStream(stream, on: topic, after: index == 0 ? nil : UInt64(index - 1))
            _ = try publisher.publish(pose, on: topic)
            if index % 20 == 0 { try await Task.sleep(for: .milliseconds(10)) }  // about 2,000 poses/s
        }
        let report = await health.wait(for: "worker", timeout: .seconds(20)) {
            $0.counters["poses"] == sentPoses.count
        }
        #expect(
            report != nil,
            "every pose sent is analysed (\(health.latest["worker"]?.counters["poses"] ?? 0) of \(sentPoses.count))\n\(topology.diagnostics)"
        )
        let counters = health.latest["worker"]?.counters ?? [:]
        #expect(counters["catchingUp"] == 0, "\(counters)")
        #expect(counters["holesSkipped"] == skipped.count / 5, "\(counters)")
        #expect(counters["posesLost"] == skipped.count, "\(counters)")
        #expect(await listener.waitForExit(timeout: .seconds(20)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/s/"] ?? []
        #expect(received == expected, "the events of exactly the poses that arrived")
        #expect(worker.isRunning)
    }
}
