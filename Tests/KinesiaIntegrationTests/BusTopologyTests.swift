import Foundation
import Glibc
import KinesiaBus
import KinesiaCLI
import KinesiaIngest
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// Real `kinesia` processes (broker, ingest, worker, listen) over IPC in a private directory:
/// the events through the bus are those of `kinesia analyze`.
///
/// Serialized: each test starts several processes, and the machine has two cores. The failure
/// cases are in ``BusResilienceTests``, which runs beside this suite.
@Suite(.serialized, .tags(.process))
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
        // Every source has judged reps on some side: the comparison is not of silence.
        for source in sources {
            let lines = ["left", "right"].flatMap { expected["event/\(source.camera)/\($0)/"] ?? [] }
            #expect(
                lines.contains {
                    $0.hasPrefix("{\"type\":\"repCompleted\"") || $0.hasPrefix("{\"type\":\"repRejected\"")
                }, "no rep in \(source)")
        }

        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        // No --count: the listener runs until the bus is idle, so an extra event is seen too.
        let listener = try await topology.startListener("listen", ["event/", "--format", "json"])
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
        // Every pose reached the worker: nothing was dropped on the way. Its count of published
        // events, once it has seen them all, is what the listener must end with.
        let poses = try sources.map { try PoseCount.of($0.spec) }.reduce(0, +)
        let report = await health.wait(for: "worker") { $0.counters["poses"] == poses }
        #expect(report?.counters["gaps"] == 0, "\(String(describing: health.latest["worker"]))")
        let published = report?.counters["events"] ?? 0
        #expect(published == total, "\(String(describing: report))")
        let idle = await listener.waitForIdleOutput(lines: max(published, total))
        #expect(idle, "listener did not get \(total) events:\n\(topology.diagnostics)")
        #expect(await listener.stop() == 0, "\(listener.diagnostics)")

        let received = ListenedLine.byTopic(listener.outputLines)
        for (topic, lines) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(received[topic, default: []] == lines, "\(topic)")
        }
        #expect(Set(received.keys) == Set(expected.keys))
        #expect(worker.isRunning)
    }

    @Test func everyRealRecordingGivesTheEventsOfAnalyzeThroughTheBus() async throws {
        try await expectSameEventsAsAnalyze(BusSource.recordings)
    }

    @Test func everySimulatedExerciseGivesTheEventsOfAnalyzeThroughTheBus() async throws {
        try await expectSameEventsAsAnalyze(Self.simulations)
    }

    @Test func aTCPBusCarriesTheSameEventsAsIPC() async throws {
        let source = BusSource.recordings[0]
        // The right side: the one with a rep on this recording.
        let right = try await Oracle.events(source: source.spec, exercise: source.exercise, side: "right")
        #expect(right.contains { $0.hasPrefix("{\"type\":\"repRejected\"") })
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
            let candidate = try Topology(bus: "tcp://127.0.0.1:\(port)", security: { _ in ["--insecure"] })
            let process = try candidate.start("broker", ["broker"])
            // Serving, or gone (the port taken meanwhile): a stalled box never counts as a taken
            // port.
            let until = ContinuousClock.now + .seconds(60)
            while process.isRunning, !process.errorText.contains("serving"), ContinuousClock.now < until {
                try await Task.sleep(for: .milliseconds(20))
            }
            if process.errorText.contains("serving") {
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
        let listener = try await topology.startListener("listen", ["event/", "--format", "json"])
        _ = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "right=\(source.exercise):right"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source.spec, "--pace", "max"])
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(
            await listener.waitForIdleOutput(lines: right.count, quiet: .seconds(2)),
            "\(topology.diagnostics)"
        )
        #expect(await listener.stop() == 0, "\(listener.diagnostics)")
        #expect(ListenedLine.byTopic(listener.outputLines) == ["event/cam0/right/": right])
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
        let listen1 = try await topology.startListener("listen-cam1", ["event/cam1/", "--format", "json"])
        let listen10 = try await topology.startListener("listen-cam10", ["event/cam10/", "--format", "json"])
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
        let poses1 = try PoseCount.of(cam1.spec)
        let poses10 = try PoseCount.of(cam10.spec)
        let report1 = await health.wait(for: "worker-1") { $0.counters["poses"] == poses1 }
        let report10 = await health.wait(for: "worker-10") { $0.counters["poses"] == poses10 }
        #expect(report1 != nil, "worker-1: \(String(describing: health.latest["worker-1"]))")
        #expect(report10 != nil, "worker-10: \(String(describing: health.latest["worker-10"]))")
        #expect(await listen1.waitForIdleOutput(lines: expected1.count), "\(topology.diagnostics)")
        #expect(await listen10.waitForIdleOutput(lines: expected10.count), "\(topology.diagnostics)")
        #expect(await listen1.stop() == 0, "\(listen1.diagnostics)")
        #expect(await listen10.stop() == 0, "\(listen10.diagnostics)")

        let received1 = ListenedLine.byTopic(listen1.outputLines)
        let received10 = ListenedLine.byTopic(listen10.outputLines)
        #expect(Array(received1.keys) == ["event/cam1/s/"])
        #expect(Array(received10.keys) == ["event/cam10/s/"])
        #expect(received1["event/cam1/s/"] == expected1)
        #expect(received10["event/cam10/s/"] == expected10)

        // Each worker saw exactly its own camera's poses (the counts differ, so neither saw both).
        #expect(poses1 != poses10)
        #expect(report1?.counters["events"] == expected1.count)
        #expect(report10?.counters["events"] == expected10.count)
    }

    @Test func aWorkerWithTwoSessionsGivesTheEventsOfTwoWorkers() async throws {
        let source = "sim:shoulderAbduction,seed=5,reps=3"
        let left = try await Oracle.events(source: source, exercise: "shoulderAbduction", side: "left")
        let right = try await Oracle.events(source: source, exercise: "shoulderAbduction", side: "right")
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener("listen", ["event/cam0/", "--format", "json"])
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
        #expect(
            await listener.waitForIdleOutput(lines: 2 * (left.count + right.count), quiet: .seconds(2)),
            "\(topology.diagnostics)")
        #expect(await listener.stop() == 0, "\(listener.diagnostics)")

        let received = ListenedLine.byTopic(listener.outputLines)
        #expect(
            received == [
                "event/cam0/pair-left/": left, "event/cam0/solo-left/": left, "event/cam0/pair-right/": right,
                "event/cam0/solo-right/": right,
            ])
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
        // The worker hosts the session: every snapshot it publishes says it is running.
        #expect(!snapshots.isEmpty && snapshots.allSatisfy { $0.snapshot.isRunning })
        #expect(report?.counters["publishFailures"] == 0)
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
        // And at the rate: a worker that published only on count changes would pass the checks
        // above. Snapshots per second of pose time are the default --snapshot-rate (15), less a
        // little for the start and end of the set.
        let times = try PoseSource.load(source).map(\.timestamp)
        let duration = (times.last ?? 0) - (times.first ?? 0)
        #expect(duration > 5)
        let rate = Double(snapshots.count) / duration
        #expect(rate > 15 * 0.9 && rate < 15 + Double(countChanges) / duration + 0.5, "\(rate) a second")
    }
}

/// How many poses a finite source has.
enum PoseCount {
    static func of(_ spec: String) throws -> Int {
        try PoseSource.load(spec).count
    }
}
