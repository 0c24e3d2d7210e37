import Foundation
import Glibc
import KinesiaBus
import KinesiaCLI
import KinesiaIngest
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// Real `kinesia` processes over IPC when things go wrong: restarts, the broker's death,
/// malformed messages, signals, a second broker, bad standard input.
///
/// Serialized like ``BusTopologyTests`` (each test starts several processes on a 2-core
/// machine); the two suites run side by side, which halves the longest serial chain of the
/// test run.
@Suite(.serialized, .tags(.process))
struct BusResilienceTests {
    @Test
    func aRestartedIngestKeepsTheSessionsWhenTimeGoesOnAndRestartsTheirTimeKeepingTheCountsWhenItDoesNot()
        async throws
    {
        let topology = try Topology()
        defer { topology.tearDown() }
        func write(_ name: String, _ poses: [Pose]) throws -> String {
            let path = topology.directory + "/" + name
            try (poses.map(PoseJSONLine.encode).joined(separator: "\n") + "\n")
                .write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let first = try PoseSource.load("sim:squat,seed=1,reps=2")
        let later = try PoseSource.load("sim:squat,seed=2,reps=2,start=100")
        let fileA = try write("a.jsonl", first)
        let fileB = try write("b.jsonl", later)
        let fileAB = try write("ab.jsonl", first + later)
        let continued = try await Oracle.events(source: fileAB, exercise: "squat", side: "left")
        let fresh = try await Oracle.events(source: fileA, exercise: "squat", side: "left")

        _ = try await topology.startBroker()
        let listener = try await topology.startListener(
            "listen", ["event/cam0/", "--format", "json", "--count", String(continued.count + fresh.count)])
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "s=squat:left"])
        var sent = 0
        for (run, file) in [fileA, fileB, fileA].enumerated() {
            let ingest = try topology.start(
                "ingest-\(run)", ["ingest", "--camera", "cam0", "--source", file, "--pace", "max"])
            #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
            sent += try PoseCount.of(file)
            // The next sender starts once the worker has every pose of this one.
            let report = await health.wait(for: "worker") { $0.counters["poses"] == sent }
            #expect(report != nil, "\(topology.diagnostics)")
        }
        #expect(await listener.waitForExit() == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/s/"] ?? []
        #expect(received == continued + fresh)
        let report = health.latest["worker"]
        #expect(report?.counters["restarts"] == 2)
        #expect(report?.counters["timeBaseRestarts"] == 1)
        #expect(report?.counters["rejected"] == 0)
    }

    /// Whether the broker's death loses poses is a race: those in flight when it dies are lost,
    /// and so are those the ingest queued during the outage if it reconnects before the
    /// worker's subscription reaches the new broker; if the worker comes back first, nothing
    /// is lost. So the test does not ask for a gap: it asks that every pose the ingest sent
    /// either reached the worker or is counted in its gaps.
    @Test func everyProcessReconnectsAfterTheBrokerIsKilledAndTheWorkerAccountsForEveryPoseSent()
        async throws
    {
        let topology = try Topology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        let listener = try await topology.startListener("listen", ["event/", "--format", "json"])
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "s=squat:left"])
        // 600 poses a second (60 fps, ten times the recording's pace): the worker keeps up, so
        // every gap comes from the broker's death.
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--name", "ingest", "--camera", "cam0", "--source", "sim:squat,seed=3,fps=60",
                "--pace", "recording", "--speed", "10", "--loop",
            ])
        let before = await health.wait(for: "worker") { $0.counters["poses", default: 0] > 1000 }
        #expect(before != nil, "\(topology.diagnostics)")
        #expect(before?.counters["gaps"] == 0)
        let eventsBefore = listener.outputLines.count
        #expect(eventsBefore > 0)

        broker.signal(SIGKILL)
        _ = await broker.waitForExit()
        try await Task.sleep(for: .milliseconds(500))  // the outage
        let restarted = try await topology.startBroker("broker-again")

        // Poses from the same ingest reach the worker again, and events the listener.
        let posesBefore = before?.counters["poses"] ?? 0
        let after = await health.wait(for: "worker", timeout: .seconds(30)) {
            $0.counters["poses", default: 0] > posesBefore + 1000
        }
        #expect(
            after != nil, "worker: \(String(describing: health.latest["worker"]))\n\(topology.diagnostics)")
        #expect(after?.counters["decodeErrors"] == 0)
        #expect(after?.counters["restarts"] == 0)
        let ingestReport = await health.wait(for: "ingest") {
            $0.counters["sent", default: 0] > posesBefore + 1000
        }
        #expect(ingestReport != nil)
        #expect(
            await listener.waitForOutputLines(eventsBefore + 5, timeout: .seconds(30)),
            "\(listener.diagnostics)")

        // Stopped, the ingest says how many poses it sent; the worker received each of them or
        // counted it missing.
        #expect(await ingest.stop() == 0, "\(ingest.diagnostics)")
        let sent = ingest.errorText.firstMatch(of: /stopped: ([0-9]+) poses sent/).flatMap { Int($0.1) }
        #expect(sent != nil, "\(ingest.diagnostics)")
        // Poses lost while the broker was down come back by replay, a batch at a time: on a
        // loaded machine that takes a while.
        let accounted = await health.wait(for: "worker", timeout: .seconds(90)) {
            $0.counters["poses", default: 0] + $0.counters["gaps", default: 0] == sent
        }
        #expect(
            accounted != nil,
            "sent \(sent ?? -1), worker: \(String(describing: health.latest["worker"]))")
        #expect(await restarted.stop() == 0)
    }

    @Test func aMalformedPoseMessageIsCountedAndIgnoredByTheWorker() async throws {
        let source = BusSource.recordings[0]
        let left = try await Oracle.events(source: source.spec, exercise: source.exercise, side: "left")
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener(
            "listen", ["event/cam0/", "--format", "json", "--count", String(left.count)])
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "left=\(source.exercise):left"])

        // Garbage straight from libzmq, once the worker's subscription reached this publisher.
        let context = try ZMQContext()
        defer { context.terminate() }
        let injector = try ZMQSocket(.xpub, context: context, linger: .seconds(1))
        defer { injector.close() }
        try injector.connect("ipc://\(topology.bus)/pub.sock")
        var subscribed = false
        while !subscribed, let frames = try injector.receive(timeout: .seconds(60)) {
            subscribed = frames.first == [1] + Array("pose/cam0/".utf8)
        }
        #expect(subscribed, "no subscription to pose/cam0/ reached the injector")
        let topic = Array("pose/cam0/".utf8)
        let pose = Pose(points: [.leftShoulder: CGPoint(x: 1, y: 2)], timestamp: 0.5)
        let valid = try PoseCodec.encode(
            pose, header: WireHeader(kind: .pose, streamID: StreamID(7), sequence: 0, sentAt: 0))
        try injector.send([topic, Array("this is not a Kinesia payload, only some text".utf8)])
        try injector.send([topic, Array(valid.dropLast(5))])
        try injector.send([topic])

        let counted = await health.wait(for: "worker") { $0.counters["decodeErrors", default: 0] >= 3 }
        #expect(counted?.counters["decodeErrors.badMagic"] == 1)
        #expect(counted?.counters["decodeErrors.truncated"] == 1)
        #expect(counted?.counters["decodeErrors.frameCount"] == 1)
        #expect(counted?.counters["poses"] == 0)

        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source.spec, "--pace", "max"])
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(await listener.waitForExit() == 0, "\(topology.diagnostics)")
        #expect(ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] == left)
        let final = await health.wait(for: "worker") { $0.counters["poses"] == 100 }
        #expect(final?.counters["decodeErrors"] == 3)
        #expect(final?.counters["gaps"] == 0)
    }

    @Test func listenWarnsOfAGapAndReportsAMalformedMessageWithoutStopping() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener(
            "listen", ["event/", "--format", "json", "--count", "2"])
        let context = try ZMQContext()
        defer { context.terminate() }
        let injector = try ZMQSocket(.xpub, context: context, linger: .seconds(1))
        defer { injector.close() }
        try injector.connect("ipc://\(topology.bus)/pub.sock")
        let subscription = try injector.receive(timeout: .seconds(60))
        #expect(subscription?.first == [1] + Array("event/".utf8))

        let topic = try Topic.event(camera: "cam0", session: "left")
        var encoder = WireEncoder(streamID: StreamID(0x1234))
        var payload: [UInt8] = []
        let event = MotionJSON.encode(.holdStarted, at: 1.5)
        try encoder.encode(json: Array(event.utf8), on: topic, into: &payload)
        try injector.send([topic.bytes, payload])
        try injector.send([topic.bytes, Array(repeating: 0x55, count: 40)])
        for _ in 0..<5 { try encoder.encode(json: Array(event.utf8), on: topic, into: &payload) }
        try injector.send([topic.bytes, payload])

        #expect(await listener.waitForExit() == 0, "\(listener.diagnostics)")
        let lines = listener.outputLines.compactMap(ListenedLine.init)
        #expect(lines.map(\.seq) == [0, 5])
        #expect(lines.allSatisfy { $0.payload == event && $0.stream == "0000000000001234" })
        #expect(
            listener.errorText.contains("event/cam0/left/: 4 messages missing before #5"),
            "\(listener.diagnostics)")
        #expect(
            listener.errorText.contains("malformed message on \"event/cam0/left/\""),
            "\(listener.diagnostics)")
    }

    @Test func sigtermStopsIngestWorkerAndBrokerWithStatusZero() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        let worker = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "s=squat:left"])
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", "sim:squat", "--pace", "recording", "--loop"])
        #expect(await ingest.waitForError(containing: "publishing"), "\(ingest.diagnostics)")

        #expect(await ingest.stop() == 0, "\(ingest.diagnostics)")
        #expect(await worker.stop() == 0, "\(worker.diagnostics)")
        #expect(await broker.stop() == 0, "\(broker.diagnostics)")
        for process in [ingest, worker, broker] {
            #expect(kill(process.pid, 0) != 0, "\(process.name) is still there")
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: topology.bus)) ?? []
        #expect(!files.contains("pub.sock") && !files.contains("sub.sock"), "\(files)")
    }

    @Test func sigtermToUpRunningTheRealCommandsLeavesNoProcessBehind() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let file = topology.directory + "/topology.json"
        let json = """
            {
              "bus": "\(topology.bus)",
              "processes": [
                {"name": "broker", "command": ["broker"], "restart": "always"},
                {"name": "worker-sides", "command": ["worker", "--camera", "cam0",
                  "--session", "left=shoulderAbduction:left", "--session", "right=shoulderAbduction:right"]},
                {"name": "listen", "command": ["listen", "event/", "--format", "json"]},
                {"name": "ingest", "command": ["ingest", "--camera", "cam0", "--source", "sim:shoulderAbduction",
                  "--speed", "10", "--loop"]}
              ],
              "shutdown": {"deadlineSeconds": 5},
              "startup": {"settleSeconds": 0.2}
            }
            """
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let up = try topology.start("up", ["up", file], addingBus: false)
        // The listener (a child of up, printing to up's standard output) sees events.
        #expect(
            await waitUntil(timeout: .seconds(30)) {
                up.outputLines.contains { $0.hasPrefix(#"{"topic":"event/cam0/left/""#) }
                    && up.outputLines.contains { $0.hasPrefix(#"{"topic":"event/cam0/right/""#) }
            }, "\(up.diagnostics)")
        #expect(topology.processesUsingDirectory().count == 5)

        #expect(await up.stop(grace: .seconds(30)) == 0, "\(up.diagnostics)")
        #expect(topology.processesUsingDirectory() == [], "\(up.diagnostics)")
        for child in ["ingest", "worker-sides", "listen", "broker"] {
            #expect(up.errorText.contains("exited \(child) (pid"), "\(child)")
        }
        #expect(!up.errorText.contains("SIGKILL"), "\(up.diagnostics)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: topology.bus)) ?? []
        #expect(!files.contains("pub.sock") && !files.contains("sub.sock"), "\(files)")
    }

    @Test func aSecondBrokerOnTheSameDirectoryIsRefused() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let first = try await topology.startBroker()
        let second = try topology.start("broker-2", ["broker"])
        #expect(await second.waitForExit() == 1)
        #expect(second.errorText.contains("another broker already serves"), "\(second.diagnostics)")
        #expect(first.isRunning)
    }

    @Test func ingestFromStandardInputReportsMalformedLinesAndSendsTheRest() async throws {
        let source = BusSource.recordings[3]
        let lines = try String(contentsOfFile: source.spec, encoding: .utf8).split(separator: "\n")
        let topology = try Topology()
        defer { topology.tearDown() }
        var input = lines.map(String.init)
        input.insert("{\"t\": oops", at: 50)
        input.insert("not json at all", at: 120)
        let inputPath = topology.directory + "/stdin.jsonl"
        try (input.joined(separator: "\n") + "\n").write(toFile: inputPath, atomically: true, encoding: .utf8)
        let expected = try await Oracle.events(source: source.spec, exercise: source.exercise, side: "left")

        _ = try await topology.startBroker()
        let listener = try await topology.startListener(
            "listen", ["event/cam0/", "--format", "json", "--count", String(expected.count)])
        _ = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "left=\(source.exercise):left"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", "-"],
            standardInput: inputPath)
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("standard input line 51:"), "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("standard input line 121:"), "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("201 poses sent"), "\(ingest.diagnostics)")
        #expect(await listener.waitForExit() == 0, "\(topology.diagnostics)")
        #expect(ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] == expected)
    }
}
