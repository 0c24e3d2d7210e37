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
        BusSource(camera: "sim-\($0.id)", spec: "sim:\($0.id),seed=11,reps=3", exercise: $0.id)
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
        let health = try HealthWatch(bus: topology.bus)
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
        // Every pose reached the worker: nothing was dropped on the way.
        let poses = try sources.map { try PoseCount.of($0.spec) }.reduce(0, +)
        let report = await health.wait(for: "worker") { $0.counters["poses"] == poses }
        #expect(report?.counters["gaps"] == 0, "\(String(describing: health.latest["worker"]))")
    }

    @Test func everyRealRecordingGivesTheEventsOfAnalyzeThroughTheBus() async throws {
        try await expectSameEventsAsAnalyze(BusSource.recordings)
    }

    @Test func everySimulatedExerciseGivesTheEventsOfAnalyzeThroughTheBus() async throws {
        try await expectSameEventsAsAnalyze(Self.simulations)
    }

    @Test func aTCPBusCarriesTheSameEventsAsIPC() async throws {
        let source = BusSource.recordings[0]
        let left = try await Oracle.events(source: source.spec, exercise: source.exercise, side: "left")
        // A port the system just gave out, with the next one free too (the subscribers' side).
        var topology: Topology?
        var broker: KinesiaProcess?
        for _ in 0..<5 where broker == nil {
            let context = try ZMQContext()
            let probe = try ZMQSocket(.pull, context: context)
            let endpoint = try probe.bind("tcp://127.0.0.1:*")
            probe.close()
            context.terminate()
            guard let port = endpoint.split(separator: ":").last.flatMap({ Int($0) }), port < 65534 else {
                continue
            }
            let candidate = try Topology(bus: "tcp://127.0.0.1:\(port)")
            let process = try candidate.start("broker", ["broker"])
            if await process.waitForError(containing: "serving", timeout: .seconds(5)) {
                topology = candidate
                broker = process
            } else {
                candidate.tearDown()
            }
        }
        guard let topology, broker != nil else {
            Issue.record("no free TCP port pair for the broker")
            return
        }
        defer { topology.tearDown() }
        let listener = try await topology.startListener(
            "listen", ["event/", "--format", "json", "--count", String(left.count)])
        _ = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "left=\(source.exercise):left"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source.spec, "--pace", "max"])
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(await listener.waitForExit() == 0, "\(topology.diagnostics)")
        #expect(ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] == left)
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
        let report1 = await health.wait(for: "worker-1") { $0.counters["poses"] == poses1 }
        let report10 = await health.wait(for: "worker-10") { $0.counters["poses"] == poses10 }
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

    @Test func snapshotsFollowEveryCountChangeAndAtMostFifteenASecondOfPoseTime() async throws {
        let source = "sim:shoulderAbduction,seed=5,reps=3"
        let oracle = try await Oracle.run(source: source, exercise: "shoulderAbduction", side: "left")
        guard case .summary(let summary) = try MotionJSON.decode(oracle.summary) else {
            Issue.record("no summary: \(oracle.summary)")
            return
        }
        #expect(summary.repCount + summary.rejectedCount > 0)
        let poses = try PoseCount.of(source)
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener("listen", ["snapshot/cam0/", "--format", "json"])
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "left=shoulderAbduction:left"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source, "--pace", "max"])
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        let report = await health.wait(for: "worker") { $0.counters["poses"] == poses }
        let sent = report?.counters["snapshots"] ?? 0
        #expect(sent > 0)
        #expect(await listener.waitForOutputLines(sent), "\(listener.diagnostics)")

        let lines = ListenedLine.byTopic(listener.outputLines)
        #expect(Array(lines.keys) == ["snapshot/cam0/left/"])
        let snapshots = try (lines["snapshot/cam0/left/"] ?? []).map { try MotionJSON.decodeSnapshot($0) }
        #expect(snapshots.count == sent)
        #expect(snapshots.last?.snapshot.repCount == summary.repCount)
        #expect(snapshots.last?.snapshot.rejectedCount == summary.rejectedCount)
        var countChanges = 0
        for (previous, next) in zip(snapshots, snapshots.dropFirst()) {
            let changed =
                previous.snapshot.repCount != next.snapshot.repCount
                || previous.snapshot.rejectedCount != next.snapshot.rejectedCount
            if changed {
                countChanges += 1
            } else {
                #expect(next.t - previous.t >= 1.0 / 15 - 1e-6, "snapshots at \(previous.t) and \(next.t)")
            }
        }
        #expect(countChanges == summary.repCount + summary.rejectedCount)
    }

    @Test func aRestartedIngestKeepsTheSessionsWhenTimeGoesOnAndStartsThemOverWhenItDoesNot() async throws {
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
        #expect(report?.counters["sessionResets"] == 1)
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
        let accounted = await health.wait(for: "worker") {
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
        let subscription = try injector.receive(timeout: .seconds(10))
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

/// How many poses a finite source has.
enum PoseCount {
    static func of(_ spec: String) throws -> Int {
        try PoseSource.load(spec).count
    }
}
