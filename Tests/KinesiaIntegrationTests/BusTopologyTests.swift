import Foundation
import Glibc
import KinesiaBus
import KinesiaCLI
import KinesiaMotion
import KinesiaWire
import Testing

/// Real `kinesia` processes (broker, ingest, worker, listen) over IPC in a private directory.
///
/// Serialized: each test starts several processes, and the machine has two cores.
@Suite(.serialized)
struct BusTopologyTests {
    static let simulations: [BusSource] = Exercise.catalog.map {
        BusSource(camera: "sim-\($0.id)", spec: "sim:\($0.id),seed=11,reps=2", exercise: $0.id)
    }

    /// Runs every source through broker -> one worker (a left and a right session per camera)
    /// -> broker -> `kinesia listen event/`, and compares each session's events with
    /// `kinesia analyze` on the same source.
    private func expectSameEventsAsAnalyze(_ sources: [BusSource]) async throws {
        var expected: [String: [String]] = [:]
        for source in sources {
            for side in ["left", "right"] {
                expected["event/\(source.camera)/\(side)/"] = try await Oracle.events(
                    source: source.spec, exercise: source.exercise, side: side)
            }
        }
        let total = expected.values.map(\.count).reduce(0, +)
        #expect(total > 0)

        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener(
            "listen", ["event/", "--format", "json", "--count", String(total)])
        let worker = try await topology.startWorker(
            "worker",
            sources.flatMap { source in
                ["left", "right"].flatMap { side in
                    ["--session", "\(source.camera)/\(side)=\(source.exercise):\(side)"]
                }
            })
        var ingests: [KinesiaProcess] = []
        for source in sources {
            ingests.append(
                try topology.start(
                    "ingest-\(source.camera)",
                    ["ingest", "--camera", source.camera, "--source", source.spec, "--pace", "max"]))
        }
        for ingest in ingests {
            let status = await ingest.waitForExit(timeout: .seconds(60))
            #expect(status == 0, "\(ingest.diagnostics)")
        }
        let status = await listener.waitForExit(timeout: .seconds(30))
        #expect(status == 0, "listener did not get \(total) events:\n\(topology.diagnostics)")

        let received = ListenedLine.byTopic(listener.outputLines)
        for (topic, lines) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(received[topic, default: []] == lines, "\(topic)")
        }
        #expect(Set(received.keys).isSubset(of: Set(expected.keys)))
        #expect(worker.isRunning)
    }

    @Test func everyRealRecordingGivesTheEventsOfAnalyzeThroughTheBus() async throws {
        try await expectSameEventsAsAnalyze(BusSource.recordings)
    }

    @Test func everySimulatedExerciseGivesTheEventsOfAnalyzeThroughTheBus() async throws {
        try await expectSameEventsAsAnalyze(Self.simulations)
    }

    @Test func camerasNamedCam1AndCam10NeverCross() async throws {
        let cam1 = BusSource(camera: "cam1", spec: "sim:squat,seed=1,reps=2", exercise: "squat")
        let cam10 = BusSource(camera: "cam10", spec: "sim:squat,seed=2,reps=3", exercise: "squat")
        let expected1 = try await Oracle.events(source: cam1.spec, exercise: "squat", side: "left")
        let expected10 = try await Oracle.events(source: cam10.spec, exercise: "squat", side: "left")
        #expect(expected1 != expected10)

        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listen1 = try await topology.startListener(
            "listen-cam1", ["event/cam1/", "--format", "json", "--count", String(expected1.count)])
        let listen10 = try await topology.startListener(
            "listen-cam10", ["event/cam10/", "--format", "json", "--count", String(expected10.count)])
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker(
            "worker-1", ["--camera", "cam1", "--session", "s=squat:left"])
        _ = try await topology.startWorker(
            "worker-10", ["--camera", "cam10", "--session", "s=squat:left"])
        let ingest1 = try topology.start(
            "ingest-cam1", ["ingest", "--camera", "cam1", "--source", cam1.spec, "--pace", "max"])
        let ingest10 = try topology.start(
            "ingest-cam10", ["ingest", "--camera", "cam10", "--source", cam10.spec, "--pace", "max"])
        #expect(await ingest1.waitForExit() == 0, "\(ingest1.diagnostics)")
        #expect(await ingest10.waitForExit() == 0, "\(ingest10.diagnostics)")
        #expect(await listen1.waitForExit() == 0, "\(topology.diagnostics)")
        #expect(await listen10.waitForExit() == 0, "\(topology.diagnostics)")

        let received1 = ListenedLine.byTopic(listen1.outputLines)
        let received10 = ListenedLine.byTopic(listen10.outputLines)
        #expect(Array(received1.keys) == ["event/cam1/s/"])
        #expect(Array(received10.keys) == ["event/cam10/s/"])
        #expect(received1["event/cam1/s/"] == expected1)
        #expect(received10["event/cam10/s/"] == expected10)

        // Each worker saw exactly its own camera's poses.
        let poses1 = try PoseCount.of(cam1.spec)
        let poses10 = try PoseCount.of(cam10.spec)
        #expect(poses1 != poses10)
        let report1 = health.wait(for: "worker-1") { $0.counters["poses"] == poses1 }
        let report10 = health.wait(for: "worker-10") { $0.counters["poses"] == poses10 }
        #expect(report1 != nil, "worker-1: \(String(describing: health.latest["worker-1"]))")
        #expect(report10 != nil, "worker-10: \(String(describing: health.latest["worker-10"]))")
    }

    @Test func aWorkerWithTwoSessionsGivesTheEventsOfTwoWorkers() async throws {
        let source = "sim:shoulderAbduction,seed=5,reps=3"
        let left = try await Oracle.events(source: source, exercise: "shoulderAbduction", side: "left")
        let right = try await Oracle.events(source: source, exercise: "shoulderAbduction", side: "right")
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener(
            "listen", ["event/cam0/", "--format", "json", "--count", String(2 * (left.count + right.count))])
        _ = try await topology.startWorker(
            "worker-pair",
            [
                "--camera", "cam0", "--session", "pair-left=shoulderAbduction:left",
                "--session", "pair-right=shoulderAbduction:right",
            ])
        _ = try await topology.startWorker(
            "worker-left", ["--camera", "cam0", "--session", "solo-left=shoulderAbduction:left"])
        _ = try await topology.startWorker(
            "worker-right", ["--camera", "cam0", "--session", "solo-right=shoulderAbduction:right"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source, "--pace", "max"])
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(await listener.waitForExit() == 0, "\(topology.diagnostics)")

        let received = ListenedLine.byTopic(listener.outputLines)
        #expect(received["event/cam0/pair-left/"] == left)
        #expect(received["event/cam0/solo-left/"] == left)
        #expect(received["event/cam0/pair-right/"] == right)
        #expect(received["event/cam0/solo-right/"] == right)
    }

    @Test func everyProcessReconnectsAfterTheBrokerIsKilledAndTheWorkerCountsTheGap() async throws {
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
        let before = health.wait(for: "worker") { $0.counters["poses", default: 0] > 1000 }
        #expect(before != nil, "\(topology.diagnostics)")
        #expect(before?.counters["gaps"] == 0)
        let eventsBefore = listener.outputLines.count
        #expect(eventsBefore > 0)

        broker.signal(SIGKILL)
        _ = await broker.waitForExit()
        try await Task.sleep(for: .milliseconds(500))  // the outage: poses go nowhere
        let restarted = try await topology.startBroker("broker-again")

        let posesBefore = before?.counters["poses"] ?? 0
        let after = health.wait(for: "worker", timeout: .seconds(30)) {
            $0.counters["gaps", default: 0] > 0 && $0.counters["poses", default: 0] > posesBefore + 1000
        }
        #expect(
            after != nil, "worker: \(String(describing: health.latest["worker"]))\n\(topology.diagnostics)")
        #expect(after?.counters["decodeErrors"] == 0)
        #expect(after?.counters["restarts"] == 0)
        let ingestReport = health.wait(for: "ingest") { $0.counters["sent", default: 0] > posesBefore + 1000 }
        #expect(ingestReport != nil)
        #expect(
            await listener.waitForOutputLines(eventsBefore + 5, timeout: .seconds(30)),
            "\(listener.diagnostics)")

        #expect(await ingest.stop() == 0, "\(ingest.diagnostics)")
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
        while !subscribed, let frames = try injector.receive(timeout: .seconds(10)) {
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

        let counted = health.wait(for: "worker") { $0.counters["decodeErrors", default: 0] >= 3 }
        #expect(counted?.counters["decodeErrors.badMagic"] == 1)
        #expect(counted?.counters["decodeErrors.truncated"] == 1)
        #expect(counted?.counters["decodeErrors.frameCount"] == 1)
        #expect(counted?.counters["poses"] == 0)

        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source.spec, "--pace", "max"])
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(await listener.waitForExit() == 0, "\(topology.diagnostics)")
        #expect(ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] == left)
        let final = health.wait(for: "worker") { $0.counters["poses"] == 100 }
        #expect(final?.counters["decodeErrors"] == 3)
        #expect(final?.counters["gaps"] == 0)
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
            standardInput: FileHandle(forReadingAtPath: inputPath))
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("standard input line 51:"), "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("standard input line 121:"), "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("201 poses sent"), "\(ingest.diagnostics)")
        #expect(await listener.waitForExit() == 0, "\(topology.diagnostics)")
        #expect(ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] == expected)
    }
}

/// How many poses a finite source has.
enum PoseCount {
    static func of(_ spec: String) throws -> Int {
        try PoseSource.load(spec).count
    }
}
