import Foundation
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// Adding a worker adds capacity: a pool worker hosting two cameras' sessions is joined by a
/// second one mid-run, and one camera's sessions move to it, one at a time, while every event
/// of theirs reaches a consumer exactly once, as `kinesia analyze` finds it.
@Suite(.serialized, .tags(.process))
struct PoolRebalanceIntegrationTests {
    static let sources = ["cam0": "sim:squat,seed=2,reps=10", "cam1": "sim:squat,seed=5,reps=10"]

    @Test func aJoiningWorkerTakesOverOneCamerasSessionsExactlyOnce() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        try await Self.joinAndMove(topology)
    }

    /// The same on a TCP bus with CURVE keys: the moved sessions' poses and the listener's
    /// events come through the broker's replay port.
    @Test func overCURVEAJoiningWorkerTakesOverOneCamerasSessionsExactlyOnceThroughTheBroker() async throws {
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        try await Self.joinAndMove(topology)
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        let broker = await health.wait(for: "broker") { $0.counters["replay.entries", default: 0] > 0 }
        #expect(broker?.counters["replay.refused.notAllowed"] == 0, "\(topology.diagnostics)")
    }

    /// A pool worker hosting two cameras' sessions, joined by a second one mid-run: one camera's
    /// sessions move, and a listener from the beginning gets each of their events once.
    static func joinAndMove(_ topology: Topology) async throws {
        let state = topology.directory + "/state"
        let (coordinator, first) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        // Runs 1 to 4, all on w1 (the only worker).
        let keys = ["cam0/left", "cam0/right", "cam1/left", "cam1/right"]
        for key in keys {
            let side = key.hasSuffix("left") ? "left" : "right"
            let started = try await ControlPlaneIntegrationTests.session(
                topology, "start-\(key.replacingOccurrences(of: "/", with: "-"))",
                ["start", key, "--exercise", "squat", "--side", side])
            #expect(started.status == 0 && started.output.contains("on worker w1"), "\(started)")
        }
        // What the sessions of cam0 (the camera that moves) publish: kinesia analyze's events.
        var expected: [String: [String]] = [:]
        for (run, side) in [(UInt64(1), "left"), (2, "right")] {
            expected["event/cam0/\(side)/"] = Oracle.inRun(
                try await Oracle.events(source: Self.sources["cam0"]!, exercise: "squat", side: side), run)
        }
        let listener = try await topology.startListener(
            "listen",
            [
                "event/cam0/", "--from", "beginning", "--format", "json", "--count",
                String(expected.values.map(\.count).reduce(0, +)),
            ])
        let ingests = try Self.sources.sorted { $0.key < $1.key }.map { camera, source in
            try topology.start(
                "ingest-\(camera)",
                [
                    "ingest", "--camera", camera, "--source", source, "--speed", "2", "--keep-serving",
                    "--state", state,
                ])
        }
        try await Task.sleep(for: .seconds(3))
        let second = try topology.start(
            "w2", ["worker", "--pool", "default", "--name", "w2", "--state", state])
        for key in ["cam0/left", "cam0/right"] {
            #expect(
                await coordinator.waitForError(containing: "\(key) (run", timeout: .seconds(90))
                    && coordinator.errorText.contains("moves from worker w1 to worker w2"),
                "\(coordinator.diagnostics)")
            #expect(
                await second.waitForError(containing: "hosting \(key)=squat", timeout: .seconds(60)),
                "\(second.diagnostics)\n\(first.diagnostics)")
        }
        #expect(
            await coordinator.waitForError(
                containing: "cam0/right (run 2) moved to worker w2", timeout: .seconds(60)),
            "\(coordinator.diagnostics)")
        #expect(await listener.waitForExit(timeout: .seconds(90)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)
        for (topic, lines) in expected {
            #expect(received[topic] == lines, "\(topic): every event once, in order, across the move")
        }
        // cam1 stays together on w1; the moves were made and not ended the runs.
        let list = try await ControlPlaneIntegrationTests.session(topology, "list", ["list"])
        let rows = list.output.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        let workerOf = Dictionary(
            uniqueKeysWithValues: rows.dropFirst().map { (String($0[0]), String($0[5])) })
        #expect(
            workerOf == ["cam0/left": "w2", "cam0/right": "w2", "cam1/left": "w1", "cam1/right": "w1"],
            "\(list.output)")
        #expect(!first.errorText.contains("run 1 ended") && !first.errorText.contains("run 2 ended"))
        for ingest in ingests { ingest.signal(SIGTERM) }
    }
}
