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
        let publisher = try HoleyPosePublisher(bus: topology.bus, camera: "cam0")
        try await Task.sleep(for: .milliseconds(500))  // the worker's subscription reaches the broker
        try await publisher.publish(poses, skipping: skipped, restingEvery: 20)  // about 2,000 poses/s
        // The holes' flushes are the journal thread's, at its next batch (100 ms): a report can
        // come between the last pose analysed and them.
        let report = await health.wait(for: "worker", timeout: .seconds(60)) {
            $0.counters["poses"] == sentPoses.count && ($0.counters["holeFlushes"] ?? 0) > 0
        }
        #expect(
            report != nil,
            "every pose sent is analysed (\(health.latest["worker"]?.counters["poses"] ?? 0) of \(sentPoses.count))\n\(topology.diagnostics)"
        )
        let counters = health.latest["worker"]?.counters ?? [:]
        #expect(counters["catchingUp"] == 0, "\(counters)")
        #expect(counters["holesSkipped"] == skipped.count / 5, "\(counters)")
        #expect(counters["posesLost"] == skipped.count, "\(counters)")
        // The holes given up were forced to the device by the journal's thread, one flush for
        // those of a batch (never one a hole more).
        #expect((1...(skipped.count / 5)).contains(counters["holeFlushes"] ?? 0), "\(counters)")
        #expect(await listener.waitForExit(timeout: .seconds(60)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/s/"] ?? []
        #expect(received == expected, "the events of exactly the poses that arrived")
        #expect(worker.isRunning)
    }

    /// The end of a camera's poses lost on their way (the chaos run's seed 573863183: sent
    /// while the broker was down; here, dropped by the broker for a worker that was stopped),
    /// with no pose after them to show the hole. The ingest goes on announcing its stream's
    /// last pose on `health/`, and the worker asks its journal for what it lacks.
    @Test(.timeLimit(.minutes(2)))
    func aTailTheBrokerDroppedIsFetchedFromTheIngestsJournal() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let source = "sim:squat,seed=3,reps=40"
        let total = try PoseSource.load(source).count
        let expected = try await Oracle.events(source: source, exercise: "squat", side: "left")
        #expect(expected.filter { $0.contains("repCompleted") }.count > 20)

        // A broker that queues 200 poses for a subscriber, then drops.
        let broker = try topology.start("broker", ["broker", "--hwm", "200"])
        #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
        let health = try HealthWatch(bus: topology.bus)
        let worker = try await topology.startWorker(
            "worker",
            [
                "--camera", "cam0", "--session", "s=squat:left", "--state",
                topology.directory + "/worker-state",
            ])
        try await Task.sleep(for: .milliseconds(500))  // the worker's subscription reaches the broker
        worker.signal(SIGSTOP)
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", source, "--pace", "max", "--keep-serving",
                "--state", topology.directory + "/ingest-state",
            ])
        #expect(
            await ingest.waitForError(containing: "serving its poses through replay", timeout: .seconds(30)),
            "\(ingest.diagnostics)")
        // Every pose through the broker (forwarded, or dropped for the stopped worker) before
        // the worker runs again: none reaches it after the dropped ones to show a hole, which
        // it would wait for only the hole's bound (a loaded box's CI forwarded the last poses
        // after the worker was back, and the replay of the hole did not finish within it).
        #expect(
            await health.wait(for: "broker", timeout: .seconds(30)) {
                $0.counters["published", default: 0] >= total
            } != nil, "\(topology.diagnostics)")
        worker.signal(SIGCONT)

        let report = await health.wait(for: "worker", timeout: .seconds(30)) {
            $0.counters["poses"] == total && $0.counters["catchingUp"] == 0
        }
        let counters = health.latest["worker"]?.counters ?? [:]
        #expect(
            report != nil,
            "every pose analysed (\(counters["poses"] ?? 0) of \(total))\n\(topology.diagnostics)")
        #expect(counters["tailsRequested", default: 0] >= 1, "\(counters)")
        #expect(counters["posesLost"] == 0 && counters["holesSkipped"] == 0, "\(counters)")

        let listener = try await topology.startListener(
            "listen",
            ["event/cam0/", "--from", "beginning", "--format", "json", "--count", String(expected.count)])
        #expect(await listener.waitForExit(timeout: .seconds(60)) == 0, "\(listener.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/s/"] ?? []
        #expect(received == expected, "the events of every pose, the tail included")
    }
}
