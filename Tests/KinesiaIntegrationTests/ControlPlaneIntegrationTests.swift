import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaStore
import KinesiaTestSupport
import KinesiaWire
import Testing

/// The control plane as a user runs it: a coordinator beside the broker, a pool worker started
/// with no session, and `kinesia session` commands that start, reset, stop and list sessions on
/// the running deployment.
@Suite(.serialized, .tags(.process))
struct ControlPlaneIntegrationTests {
    static let simulation = "sim:squat,seed=3,reps=3"

    /// Starts the coordinator (with `lease` seconds, or its default) and one pool worker, and
    /// waits until the worker has reported.
    static func startSite(_ topology: Topology, state: String, lease: Int? = nil) async throws -> (
        KinesiaProcess, KinesiaProcess
    ) {
        _ = try await topology.startBroker()
        let coordinator = try topology.start(
            "coordinator", ["coordinator", "--state", state] + (lease.map { ["--lease", String($0)] } ?? []))
        #expect(await coordinator.waitForError(containing: "coordinating on"), "\(coordinator.diagnostics)")
        let worker = try topology.start(
            "w1", ["worker", "--pool", "default", "--name", "w1", "--state", state])
        #expect(await worker.waitForError(containing: "reporting to"), "\(worker.diagnostics)")
        #expect(
            await coordinator.waitForError(containing: "worker w1 joined pool default"),
            "\(coordinator.diagnostics)")
        return (coordinator, worker)
    }

    /// Starts `cam0/left` (squat) on the site's first worker, before any camera publishes.
    static func startLeftOnW1(_ topology: Topology) async throws {
        let started = try await session(
            topology, "start", ["start", "cam0/left", "--exercise", "squat", "--side", "left"])
        #expect(
            started.output
                == "cam0/left started on worker w1 (run 1); no ingest is heard publishing cam0: the run begins at its first pose",
            "\(started)")
    }

    /// The events `kinesia analyze` finds in `source` for `cam0/left` (squat), in run 1, and a
    /// listener that follows the session from the beginning until it has as many.
    static func listenToRunOne(_ topology: Topology, source: String) async throws -> (
        expected: [String], listener: KinesiaProcess
    ) {
        let expected = Oracle.inRun(
            try await Oracle.events(source: source, exercise: "squat", side: "left"), 1)
        let listener = try await topology.startListener(
            "listen",
            [
                "event/cam0/left/", "--from", "beginning", "--format", "json", "--count",
                String(expected.count),
            ])
        return (expected, listener)
    }

    /// Starts an ingest of `cam0` publishing squats in a loop at once (no wait for a subscriber),
    /// with `journal`'s flags (`--state DIR` or `--no-journal`).
    static func startLoopingIngest(_ topology: Topology, _ journal: [String]) throws -> KinesiaProcess {
        try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", "sim:squat", "--loop", "--wait-seconds", "0"] + journal
        )
    }

    /// Runs `kinesia session ARGUMENTS` to its end: its exit status, standard output and error.
    static func session(_ topology: Topology, _ name: String, _ arguments: [String]) async throws -> (
        status: Int32?, output: String, error: String
    ) {
        let command = try topology.start(name, ["session"] + arguments)
        let status = await command.waitForExit(timeout: .seconds(60))
        return (status, command.outputLines.joined(separator: "\n"), command.errorText)
    }

    @Test func sessionsStartedOnARunningDeploymentAnalyseLiveAndStopResetAndListAsAsked() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (_, worker) = try await Self.startSite(topology, state: state)

        // Every event of the run is kinesia analyze's, with the run's number.
        let analyzed = try await Oracle.events(source: Self.simulation, exercise: "squat", side: "left")
        let expected = Oracle.inRun(analyzed, 1)
        #expect(expected.contains { $0.contains("repCompleted") || $0.contains("repRejected") })
        let listener = try await topology.startListener(
            "listen", ["event/cam0/left/", "--format", "json", "--count", String(expected.count)])

        let runs = try await topology.startListener(
            "runs", ["session/cam0/left/", "--format", "json", "--count", "4"])
        let database = topology.directory + "/record.db"
        let record = try topology.start("record", ["record", "--db", database, "--camera", "cam0"])
        #expect(await record.waitForError(containing: "recording cam0"), "\(record.diagnostics)")
        let started = try await Self.session(
            topology, "start",
            ["start", "cam0/left", "--exercise", "squat", "--side", "left", "--patient", "p-17"])
        #expect(started.status == 0, "\(started)")
        #expect(
            started.output
                == "cam0/left started on worker w1 (run 1); no ingest is heard publishing cam0: the run begins at its first pose"
        )
        #expect(
            await worker.waitForError(containing: "hosting cam0/left=squat:left"), "\(worker.diagnostics)")

        // The camera comes after the session: every pose is analysed, as kinesia analyze does.
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", Self.simulation, "--speed", "4", "--state", state])
        #expect(await listener.waitForExit(timeout: .seconds(60)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] ?? []
        #expect(received == expected, "the session's events equal kinesia analyze")
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        // The list shows the run's counts, as the worker reports them: those of kinesia analyze.
        let analyzedSummary = try await Oracle.run(source: Self.simulation, exercise: "squat", side: "left")
            .summary
        let analyzedReps =
            analyzedSummary.components(separatedBy: "\"repCount\":").last?.prefix { $0.isNumber } ?? ""
        var listed = ""
        let until = ContinuousClock.now + .seconds(60)  // a bound against a hang only
        while ContinuousClock.now < until {
            listed = try await Self.session(topology, "counts", ["list", "--format", "json"]).output
            if listed.contains("\"repCount\":\(analyzedReps),") { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(
            listed.contains("\"state\":\"running\",\"repCount\":\(analyzedReps),"),
            "\(listed) \(analyzedSummary)")

        // Commands that cannot be done say why, with the status of every other command.
        let again = try await Self.session(
            topology, "again", ["start", "cam0/left", "--exercise", "squat", "--side", "left"])
        #expect(again.status == 1)
        #expect(
            again.error.contains("cam0/left already runs (run 1 on worker w1): stop it first, or reset it"))
        let unknown = try await Self.session(
            topology, "unknown", ["start", "cam0/x", "--exercise", "jump", "--side", "left"])
        #expect(unknown.status == 64 && unknown.error.contains("unknown exercise \"jump\""), "\(unknown)")
        let noPool = try await Self.session(
            topology, "no-pool",
            ["start", "cam1/left", "--exercise", "wallSit", "--side", "left", "--pool", "gait"])
        #expect(noPool.status == 1 && noPool.error.contains("no live worker in pool gait"), "\(noPool)")

        // A reset is a new run on a new stream; the same request id is done once.
        let reset = try await Self.session(
            topology, "reset", ["reset", "cam0/left", "--request-id", "reset-1"])
        #expect(
            reset.status == 0 && reset.output == "cam0/left reset: run 1 ended, run 2 started on worker w1",
            "\(reset)")
        let resetAgain = try await Self.session(
            topology, "reset-again", ["reset", "cam0/left", "--request-id", "reset-1"])
        #expect(resetAgain.status == 0 && resetAgain.output == reset.output, "\(resetAgain)")
        let list = try await Self.session(topology, "list", ["list"])
        #expect(list.status == 0)
        #expect(
            list.output.split(separator: "\n").map {
                $0.split(separator: " ").prefix(8).joined(separator: " ")
            } == [
                "SESSION EXERCISE SIDE PATIENT POOL WORKER RUN STATE",
                "cam0/left squat left p-17 default w1 2 running",
            ], "\(list.output)")

        let stop = try await Self.session(topology, "stop", ["stop", "cam0/left"])
        #expect(stop.status == 0 && stop.output == "cam0/left stopped (run 2 on worker w1)", "\(stop)")
        #expect(
            await worker.waitForError(containing: "session cam0/left (run 2) stopped"),
            "\(worker.diagnostics)")
        // The runs, as announced on session/cam0/left/: each with its number, the first's
        // patient and thresholds, each end with why and the counts.
        #expect(await runs.waitForExit(timeout: .seconds(60)) == 0, "\(runs.diagnostics)")
        let records = runs.outputLines.map { line -> String in
            let fields = line.components(separatedBy: ",\"seq\":").last ?? ""
            return String(fields.drop { $0 != "," }.dropFirst())
        }
        #expect(records.count == 4, "\(runs.outputLines)")
        #expect(
            records.first?.hasPrefix(
                #""type":"runStarted","run":"1","camera":"cam0","session":"left","exercise":"squat","side":"left","patient":"p-17","thresholds":{"start":"#
            ) == true, "\(records)")
        #expect(
            records.dropFirst().first?.hasPrefix(
                #""type":"runEnded","run":"1","camera":"cam0","session":"left","reason":"reset","repCount":"#)
                == true, "\(records)")
        #expect(
            records.dropFirst(2).first?.hasPrefix(#""type":"runStarted","run":"2","#) == true, "\(records)")
        #expect(
            records.last?.hasPrefix(
                #""type":"runEnded","run":"2","camera":"cam0","session":"left","reason":"stopped""#) == true,
            "\(records)")
        // The first run's counts are the analysis's: what kinesia analyze counted.
        let summary = try await Oracle.run(source: Self.simulation, exercise: "squat", side: "left").summary
        let repCount = summary.components(separatedBy: "\"repCount\":").last?.prefix { $0.isNumber } ?? ""
        #expect(
            records.dropFirst().first?.contains("\"repCount\":\(repCount),") == true, "\(records) \(summary)")
        // And its reps, each with its faults, are those kinesia analyze judged, read from the
        // run's own journal.
        let reps = Oracle.reps(ofSummary: summary)
        #expect(reps.hasPrefix("\"reps\":[{"), "\(summary)")
        #expect(
            records.dropFirst().first?.contains("," + reps + ",\"faults\":{") == true, "\(records) \(summary)"
        )
        // And where it began and ended in the camera's poses: the whole simulation, from #0.
        let poses = try PoseCount.of(Self.simulation)
        let firstEnd = records.dropFirst().first ?? ""
        #expect(
            firstEnd.range(
                of: #""firstPose":\{"stream":"[0-9a-f]{16}","sequence":"0"\}"#, options: .regularExpression)
                != nil, "\(firstEnd)")
        #expect(
            firstEnd.contains(#","sequence":""# + "\(poses - 1)" + #""}}"#), "\(firstEnd) (\(poses) poses)")
        // kinesia record keeps the runs, and a run's events are its stream's: those of analyze.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        var rows: [(streamID: UInt64, camera: String, session: String, json: String)] = []
        while clock.now < deadline {
            rows = (try? RecordStore(readingOnly: database).runLines()) ?? []
            if rows.count == 4 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(rows.map(\.json) == records.map { "{" + $0 }, "\(rows)")
        let store = try RecordStore(readingOnly: database)
        // A reset keeps the plan: the patient's second run.
        #expect(try store.runs(patient: "p-17") == [1, 2])
        let first = try #require(try store.runLines(run: 1).first)
        // (stored as kinesia analyze prints them: the stream says the run)
        #expect(try store.eventLines(camera: "cam0", session: "left", streamID: first.streamID) == analyzed)
        // kinesia report shows a patient's runs, each named with its exercise, side and thresholds.
        let page = topology.directory + "/runs.html"
        let report = try topology.start(
            "report", ["report", "--db", database, "--patient", "p-17", "--out", page], addingBus: false)
        #expect(await report.waitForExit(timeout: .seconds(30)) == 0, "\(report.diagnostics)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<h1>Kinesia report: patient p-17</h1>"))
        #expect(
            html.contains(
                "): cam0/left, squat left, patient p-17, thresholds start 30°, end 20°, minPeak 60°; ended (reset)"
            ),
            "\(html.prefix(3000))")
        for run in [1, 2] {
            let dated = #"Run "# + "\(run)" + #" \(\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\): "#
            #expect(html.range(of: dated, options: .regularExpression) != nil, "run \(run)'s date")
        }
        #expect(html.contains(" UTC): cam0/left, squat left, patient p-17"))
        #expect(html.contains("data-sessions=\"2\""))
        let missing = try topology.start(
            "report-missing", ["report", "--db", database, "--run", "99", "--out", page], addingBus: false)
        #expect(await missing.waitForExit(timeout: .seconds(30)) == 1)
        #expect(missing.errorText.contains("run 99 is not recorded"), "\(missing.diagnostics)")
        let stopAgain = try await Self.session(topology, "stop-again", ["stop", "cam0/left"])
        #expect(stopAgain.status == 1 && stopAgain.error.contains("cam0/left does not run"), "\(stopAgain)")
        #expect(worker.isRunning)
    }

    @Test func aCoordinatorKilledAndRestartedBringsBackTheSameSessionsAndStartsNothingTwice() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (coordinator, worker) = try await Self.startSite(topology, state: state)
        for (name, side) in [("left", "left"), ("right", "right")] {
            let started = try await Self.session(
                topology, "start-\(name)", ["start", "cam0/\(name)", "--exercise", "squat", "--side", side])
            #expect(started.status == 0, "\(started)")
        }
        // A reset done just before the kill, sent again after the restart, is done once.
        let resetBefore = try await Self.session(
            topology, "reset-before", ["reset", "cam0/right", "--request-id", "reset-r"])
        #expect(resetBefore.output.contains("run 2 ended, run 3 started"), "\(resetBefore)")
        coordinator.signal(SIGKILL)
        _ = await coordinator.waitForExit()
        let restarted = try topology.start("coordinator-again", ["coordinator", "--state", state])
        #expect(
            await restarted.waitForError(containing: "with 2 session(s) kept"), "\(restarted.diagnostics)")
        // The worker's next reports tell the new coordinator where the sessions run.
        var rows: [String] = []
        var running = 0
        let until = ContinuousClock.now + .seconds(60)  // a bound against a hang only
        while ContinuousClock.now < until {
            let list = try await Self.session(topology, "list", ["list", "--format", "json"])
            rows = list.output.components(separatedBy: "\"session\":").dropFirst().map {
                String($0.prefix(400))
            }
            running = list.output.components(separatedBy: "\"state\":\"running\"").count - 1
            if running == 2 { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(running == 2, "both sessions seen running again: \(rows)")
        #expect(
            rows.count == 2
                && rows.allSatisfy { $0.contains("\"run\":\"1\"") || $0.contains("\"run\":\"3\"") },
            "\(rows)")
        #expect(!worker.errorText.contains("run 4"), "nothing started again: \(worker.diagnostics)")
        let resetAgain = try await Self.session(
            topology, "reset-again", ["reset", "cam0/right", "--request-id", "reset-r"])
        #expect(resetAgain.status == 0 && resetAgain.output == resetBefore.output, "\(resetAgain)")
        // A new run after the restart never reuses a number.
        let reset = try await Self.session(topology, "reset", ["reset", "cam0/left"])
        #expect(reset.output.contains("run 1 ended, run 4 started"), "\(reset)")
    }

    /// A therapist asks for a baseline: the next run begins with a baseline measurement of the
    /// reps asked for, as `kinesia analyze --baseline N` does from its first pose, and its end
    /// tells the reps, the faults and the baseline measured.
    @Test func aBaselineRunMeasuresItsBaselineFromItsFirstPoseAndItsEndTellsIt() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (_, worker) = try await Self.startSite(topology, state: state)
        let runs = try await topology.startListener(
            "runs", ["session/cam0/left/", "--format", "json", "--count", "5"])
        let started = try await Self.session(
            topology, "start",
            ["start", "cam0/left", "--exercise", "squat", "--side", "left", "--patient", "p-3"])
        #expect(started.status == 0, "\(started)")
        for reps in ["0", "101", "two"] {
            let refused = try await Self.session(
                topology, "refused", ["baseline", "cam0/left", "--reps", reps])
            #expect(refused.status == 64, "\(refused)")
        }
        let missing = try await Self.session(topology, "missing", ["baseline", "cam9/left"])
        #expect(missing.status == 1 && missing.error.contains("cam9/left does not run"), "\(missing)")

        let baseline = try await Self.session(topology, "baseline", ["baseline", "cam0/left", "--reps", "2"])
        #expect(
            baseline.status == 0
                && baseline.output
                    == "cam0/left baseline of 2 reps started: run 1 ended, run 2 started on worker w1",
            "\(baseline)")
        let oracle = try await Oracle.run(
            source: Self.simulation, exercise: "squat", side: "left", arguments: ["--baseline", "2"])
        let expected = Oracle.inRun(oracle.events, 2)
        let measured = try #require(expected.first { $0.contains("\"type\":\"baselineCompleted\"") })
        let listener = try await topology.startListener(
            "listen", ["event/cam0/left/", "--format", "json", "--count", String(expected.count)])
        // The new run's service is up (its subscriber is the second "hosting" line).
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while worker.errorText.components(separatedBy: "hosting cam0/left=squat:left").count < 3,
            clock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(100))
        }
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", Self.simulation, "--speed", "4", "--state", state])
        // Once its ingest is heard, a start for the camera says nothing of it. Tried for up to
        // 30 s (the ingest's start under a loaded machine), not a number of times: a start and a
        // stop answer in tens of milliseconds.
        var right = (status: Int32?(nil), output: "", error: "")
        let heardBy = clock.now + .seconds(30)
        var attempt = 0
        repeat {
            try await Task.sleep(for: .milliseconds(500))
            right = try await Self.session(
                topology, "right-\(attempt)",
                ["start", "cam0/right", "--exercise", "squat", "--side", "right"])
            if !right.output.contains("no ingest") { break }
            _ = try await Self.session(topology, "right-stop-\(attempt)", ["stop", "cam0/right"])
            attempt += 1
        } while clock.now < heardBy
        #expect(
            right.status == 0 && right.output.hasPrefix("cam0/right started on worker w1 (run "), "\(right)")
        #expect(!right.output.contains("no ingest"), "\(right)")
        #expect(await listener.waitForExit(timeout: .seconds(60)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] ?? []
        #expect(received == expected, "the baseline run's events equal kinesia analyze --baseline 2")
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")

        let stop = try await Self.session(topology, "stop", ["stop", "cam0/left"])
        #expect(stop.status == 0, "\(stop)")
        #expect(await runs.waitForExit(timeout: .seconds(60)) == 0, "\(runs.diagnostics)")
        let records = runs.outputLines.map { line -> String in
            let fields = line.components(separatedBy: ",\"seq\":").last ?? ""
            return "{" + String(fields.drop { $0 != "," }.dropFirst())
        }
        #expect(records.count == 5, "\(records)")
        guard records.count == 5 else { return }
        #expect(
            records[1].hasPrefix(
                #"{"type":"runEnded","run":"1","camera":"cam0","session":"left","reason":"reset","repCount":0,"#
            ))
        #expect(
            records[2].hasPrefix(
                #"{"type":"runStarted","run":"2","camera":"cam0","session":"left","exercise":"squat","side":"left","patient":"p-3","#
            ))
        #expect(
            records[3] == #"{"type":"baselineStarted","run":"2","camera":"cam0","session":"left","reps":2}"#)
        let end = records[4]
        #expect(
            end.hasPrefix(
                #"{"type":"runEnded","run":"2","camera":"cam0","session":"left","reason":"stopped","#))
        #expect(
            end.contains("," + Oracle.reps(ofSummary: oracle.summary) + ",\"faults\":{"),
            "\(end) \(oracle.summary)")
        func number(after key: String, in line: String) -> Double? {
            line.components(separatedBy: key).dropFirst().first.flatMap {
                Double($0.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "e" })
            }
        }
        let value = try #require(number(after: "\"value\":", in: measured))
        #expect(number(after: "\"baseline\":", in: end) == value, "\(end) \(measured)")
    }
}

/// A pool worker over a clinic's day: run after run on one camera, it keeps no descriptor of the
/// runs that ended (each run's journal streams are closed when its service ends).
@Suite(.serialized, .tags(.process))
struct PoolWorkerDayTests {
    @Test func aPoolWorkerRunningSessionAfterSessionKeepsNoDescriptorOfTheRunsThatEnded() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (_, worker) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        let ingest = try ControlPlaneIntegrationTests.startLoopingIngest(topology, ["--state", state])
        func descriptors() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker.pid)/fd")) ?? []).count
        }
        func run(_ index: Int) async throws {
            let start = try await ControlPlaneIntegrationTests.session(
                topology, "start-\(index)", ["start", "cam0/left", "--exercise", "squat", "--side", "left"])
            #expect(start.status == 0, "\(start)")
            let stop = try await ControlPlaneIntegrationTests.session(
                topology, "stop-\(index)", ["stop", "cam0/left"])
            #expect(stop.status == 0, "\(stop)")
        }
        // One run first: whatever a worker opens once (the replay client's sockets) is open.
        try await run(0)
        try await Task.sleep(for: .seconds(1))
        let before = descriptors()
        for index in 1...12 { try await run(index) }
        try await Task.sleep(for: .seconds(1))
        let after = descriptors()
        // Each run's journal held 8 descriptors (3 streams' directories, locks and segments).
        #expect(after <= before + 2, "\(before) descriptors after one run, \(after) after 13")
        #expect(worker.isRunning && ingest.isRunning, "\(worker.diagnostics)")
    }
}

/// A session stopped while its only worker is dead: the coordinator ends its run itself, so that
/// no run stays open for ever.
@Suite(.serialized, .tags(.process))
struct OrphanRunTests {
    @Test func aRunStoppedWhileItsWorkerIsDeadIsEndedByTheCoordinator() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (coordinator, worker) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        let runs = try await topology.startListener(
            "runs", ["session/cam0/left/", "--format", "json", "--count", "2"])
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        worker.signal(SIGKILL)
        _ = await worker.waitForExit()
        // After its lease, the session waits for a worker; then it is stopped.
        var listed = ""
        let until = ContinuousClock.now + .seconds(60)  // a bound against a hang only
        while ContinuousClock.now < until {
            listed = try await ControlPlaneIntegrationTests.session(topology, "list", ["list"]).output
            if listed.contains("waiting") { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(listed.contains("waiting"), "\(listed)\n\(coordinator.diagnostics)")
        let stop = try await ControlPlaneIntegrationTests.session(topology, "stop", ["stop", "cam0/left"])
        #expect(stop.status == 0 && stop.output == "cam0/left stopped (run 1)", "\(stop)")
        #expect(await runs.waitForExit(timeout: .seconds(60)) == 0, "\(runs.diagnostics)")
        #expect(
            runs.outputLines.first?.contains(#""type":"runStarted","run":"1""#) == true, "\(runs.outputLines)"
        )
        #expect(
            runs.outputLines.last?.contains(
                #""type":"runEnded","run":"1","camera":"cam0","session":"left","reason":"stopped""#)
                == true, "\(runs.outputLines)")
        #expect(
            coordinator.errorText.contains("cam0/left: run 1 ended (stopped) with no live worker hosting it"))
    }
}

/// The Python client (`kinesia.control`) commands the same coordinator as `kinesia session`.
@Suite(.serialized, .tags(.process))
struct PythonControlClientTests {
    @Test func thePythonClientStartsListsBaselinesAndStopsASession() async throws {
        let python = try PackagePaths.python()
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        _ = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        let script = """
            import sys
            from kinesia.control import ControlClient
            client = ControlClient(sys.argv[1])
            for answer in (client.start("cam0/left", exercise="squat", side="left", patient="p-9", request_id="py-1"),
                           client.start("cam0/left", exercise="squat", side="left", request_id="py-1"),
                           client.list(),
                           client.baseline("cam0/left", reps=3),
                           client.stop("cam0/left"), client.stop("cam0/left")):
                print(answer.outcome, answer.exit_code, answer.run, len(answer.sessions), answer.message)
            """
        let output = topology.directory + "/python.out"
        let errors = topology.directory + "/python.err"
        let process = try TestProcess(
            executable: python, arguments: ["-c", script, topology.bus],
            environment: ProcessInfo.processInfo.environment,
            standardOutput: output, standardError: errors)
        #expect(await process.waitForExit(timeout: .seconds(30)) == 0, "\(TestProcess.readFile(errors))")
        #expect(
            TestProcess.readFile(output).split(separator: "\n") == [
                "started 0 1 0 cam0/left started on worker w1 (run 1); no ingest is heard publishing cam0: the run begins at its first pose",
                "started 0 1 0 cam0/left started on worker w1 (run 1); no ingest is heard publishing cam0: the run begins at its first pose",
                "listed 0 None 1 1 session(s)",
                "baselineStarted 0 2 0 cam0/left baseline of 3 reps started: run 1 ended, run 2 started on worker w1",
                "stopped 0 2 0 cam0/left stopped (run 2 on worker w1)",
                "notRunning 1 None 0 cam0/left does not run",
            ], "\(TestProcess.readFile(errors))")
    }
}

/// A pool worker killed mid-session: after its lease, another live worker of the pool takes the
/// session over, rebuilds it from its checkpoint and the camera's pose journal, and continues its
/// stream, so that a consumer following it exactly once ends with the events of
/// `kinesia analyze`.
@Suite(.serialized, .tags(.process))
struct PoolTakeoverIntegrationTests {
    /// `w1` is killed 3 s into the run; `w2` takes the session over, on the same box (the state
    /// directory shared: it resumes from `w1`'s checkpoint) or on another box (a state directory
    /// of its own: none of `w1`'s journal, checkpoints or session starts; it rebuilds the run from
    /// its first pose, as `w1` reported it to the coordinator, on the run's stream). Either way a
    /// consumer following the session from the beginning gets every event of `kinesia analyze`
    /// once, the run starts and ends once, and its end is the whole run's.
    @Test(arguments: [false, true])
    func aKilledWorkersSessionGoesOnOnAnotherWorkerOfThePoolExactlyOnce(onAnotherBox: Bool) async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let source = "sim:squat,seed=2,reps=6"
        let site = try await Self.startTakeoverSite(
            topology, source: source, speed: 2,
            secondState: onAnotherBox ? topology.directory + "/other-box" : nil)
        let (coordinator, first, second, expected, listener, ingest) = (
            site.coordinator, site.first, site.second, site.expected, site.listener, site.ingest
        )
        defer { ingest.signal(SIGTERM) }
        try await Task.sleep(for: .seconds(3))
        first.signal(SIGKILL)
        _ = await first.waitForExit()
        #expect(
            await coordinator.waitForError(
                containing: "cam0/left (run 1) goes to worker w2", timeout: .seconds(60)),
            "\(coordinator.diagnostics)")
        #expect(
            await second.waitForError(containing: "hosting cam0/left=squat:left"), "\(second.diagnostics)")
        let rebuilt =
            second.errorText.contains("the run goes on from another worker on stream")
            && second.errorText.contains("rebuilt from its first pose")
        #expect(rebuilt == onAnotherBox, "\(second.diagnostics)")
        #expect(await listener.waitForExit(timeout: .seconds(60)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] ?? []
        #expect(received == expected, "every event once, in order, across the takeover")
        // The coordinator answered every report in time: no session went on without it.
        for process in [first, second] {
            #expect(!process.errorText.contains("did not confirm the run's resume"), "\(process.diagnostics)")
        }
        let list = try await ControlPlaneIntegrationTests.session(topology, "list", ["list"])
        #expect(list.output.contains("cam0/left") && list.output.contains("w2"), "\(list.output)")
        // The run's end, told by w2, is the whole run's: from the camera's first pose, with
        // every rep kinesia analyze judged, though w2 rebuilt it. (Its start comes by replay from
        // w2, which serves the run's journal while it hosts the run.)
        let runs = try await topology.startListener(
            "runs", ["session/cam0/left/", "--from", "beginning", "--format", "json", "--count", "2"])
        #expect(await runs.waitForIdleOutput(lines: 1, quiet: .milliseconds(500)), "\(runs.diagnostics)")
        let stop = try await ControlPlaneIntegrationTests.session(topology, "stop", ["stop", "cam0/left"])
        #expect(stop.status == 0, "\(stop)")
        #expect(await runs.waitForExit(timeout: .seconds(30)) == 0, "\(runs.diagnostics)")
        #expect(runs.outputLines.count == 2, "the run started once and ended once: \(runs.outputLines)")
        let end = runs.outputLines.last ?? ""
        let summary = try await Oracle.run(source: source, exercise: "squat", side: "left").summary
        #expect(end.contains(#""type":"runEnded","run":"1""#), "\(runs.outputLines)")
        #expect(end.contains("," + Oracle.reps(ofSummary: summary) + ",\"faults\":{"), "\(end) \(summary)")
        #expect(end.contains(#""sequence":"0"},"lastPose""#), "\(end)")
    }
}

/// A pool session tells the coordinator its run's first pose before it publishes what the pose
/// causes (so a worker of another box never rebuilds the run from less than was published), but
/// waits for it at most `WorkerService.resumeWait`: with the coordinator paused at that moment,
/// the session says so and goes on live, and nothing is lost.
@Suite(.serialized, .tags(.process))
struct ResumeBarrierIntegrationTests {
    @Test func aRunsFirstPoseWaitsForTheCoordinatorAtMostItsBound() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let source = "sim:squat,seed=2,reps=3"
        let state = topology.directory + "/state"
        // A lease of 60 s: the coordinator's pause below (until the ingest's first pose has come and
        // gone, however loaded the machine) stays well within it.
        let (coordinator, worker) = try await ControlPlaneIntegrationTests.startSite(
            topology, state: state, lease: 60)
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        #expect(await worker.waitForError(containing: "hosting cam0/left"), "\(worker.diagnostics)")
        let (expected, listener) = try await ControlPlaneIntegrationTests.listenToRunOne(
            topology, source: source)
        // Paused for less than the lease: the worker keeps its session, but no report is granted
        // while the run's first pose arrives.
        coordinator.signal(SIGSTOP)
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source, "--speed", "2", "--state", state])
        defer { ingest.signal(SIGTERM) }
        #expect(
            await worker.waitForError(containing: "did not confirm the run's resume within 0.25 seconds"),
            "\(worker.diagnostics)")
        try await Task.sleep(for: .milliseconds(500))
        coordinator.signal(SIGCONT)
        #expect(await listener.waitForExit(timeout: .seconds(60)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] ?? []
        #expect(received == expected, "every event once, in order")
        #expect(!worker.errorText.contains("lease lapsed"), "\(worker.diagnostics)")
    }
}

/// A run stopped or reset at once after it started, while its camera publishes (a physiotherapist
/// who pressed start by mistake): the run's first pose is told to the coordinator while the
/// session is already stopping, and the grant of the report that carried it releases the
/// session's wait. Before, a stopping session's resume was reported but never acknowledged: each
/// such run waited out its whole bound (`WorkerService.resumeWait`, 250 ms), said so in a
/// warning, and the stop or reset answered that much later (280 ms against 13 ms).
@Suite(.serialized, .tags(.process))
struct StopAfterFirstPoseIntegrationTests {
    @Test func aRunStoppedOrResetJustAfterItsFirstPoseHasItsResumeKept() async throws {
        let python = try PackagePaths.python()
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (_, worker) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        let ingest = try ControlPlaneIntegrationTests.startLoopingIngest(topology, ["--no-journal"])
        defer { ingest.signal(SIGTERM) }
        #expect(await ingest.waitForError(containing: "publishing"), "\(ingest.diagnostics)")
        let rounds = 6
        let script = """
            import sys, time
            from kinesia.control import ControlClient
            client = ControlClient(sys.argv[1])
            for _ in range(int(sys.argv[2])):
                print(client.start("cam0/left", exercise="squat", side="left").outcome,
                      client.reset("cam0/left").outcome, client.stop("cam0/left").outcome)
                time.sleep(0.3)
            """
        let output = topology.directory + "/python.out"
        let errors = topology.directory + "/python.err"
        let process = try TestProcess(
            executable: python, arguments: ["-c", script, topology.bus, String(rounds)],
            environment: ProcessInfo.processInfo.environment,
            standardOutput: output, standardError: errors)
        #expect(await process.waitForExit(timeout: .seconds(60)) == 0, "\(TestProcess.readFile(errors))")
        #expect(
            TestProcess.readFile(output).split(separator: "\n")
                == Array(repeating: "started reset stopped", count: rounds), "\(TestProcess.readFile(errors))"
        )
        // 12 runs, each stopped (by the reset or the stop) within moments of its first pose. The
        // bound is a live-first bound, not an expectation: a machine loaded enough may miss it
        // once or twice; before the mend, every run but a lucky one missed it.
        let missed = worker.errorText.components(separatedBy: "did not confirm the run's resume").count - 1
        #expect(missed <= 2, "\(missed) of \(2 * rounds) runs waited out their bound: \(worker.diagnostics)")
        // A run that ended before its first event has no reps: its end says so, with no warning.
        #expect(!worker.errorText.contains("cannot be read from its journal"), "\(worker.diagnostics)")
    }
}

/// A consumer that starts while a session has no server (the coordinator away past the lease:
/// the worker stopped the session, its replay server with it) still gets every event of the run
/// once the session goes on: a stream without a server is waited for, not given up at once.
@Suite(.serialized, .tags(.process))
struct ConsumerDuringCoordinatorPauseTests {
    @Test func aConsumerStartedWhileTheCoordinatorIsAwayGetsEveryEventOnce() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let source = "sim:squat,seed=2,reps=6"
        let state = topology.directory + "/state"
        let (coordinator, worker) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        #expect(await worker.waitForError(containing: "hosting cam0/left"), "\(worker.diagnostics)")
        let expected = Oracle.inRun(
            try await Oracle.events(source: source, exercise: "squat", side: "left"), 1)
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", source, "--speed", "2", "--keep-serving", "--state",
                state,
            ])
        defer { ingest.signal(SIGTERM) }
        let health = try HealthWatch(bus: topology.bus)
        try await Task.sleep(for: .seconds(3))
        // Away past the lease: the worker stops the session (its replay server too).
        coordinator.signal(SIGSTOP)
        #expect(
            await worker.waitForError(containing: "lease lapsed", timeout: .seconds(60)),
            "\(worker.diagnostics)")
        // And says, in its own report, that the session's streams are moving (a consumer that
        // saw one of its events live waits for the taker's announcement).
        let moving = await health.wait(for: "w1", timeout: .seconds(60)) {
            $0.moving.map(\.topic.string) == [
                "event/cam0/left/", "snapshot/cam0/left/", "session/cam0/left/",
            ]
        }
        #expect(moving != nil, "\(String(describing: health.latest["w1"]))")
        let listener = try await topology.startListener(
            "listen",
            [
                "event/cam0/left/", "--from", "beginning", "--format", "json", "--count",
                String(expected.count),
            ])
        try await Task.sleep(for: .seconds(6))
        coordinator.signal(SIGCONT)
        #expect(await listener.waitForExit(timeout: .seconds(90)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] ?? []
        #expect(received == expected, "every event once, in order")
        #expect(!listener.errorText.contains("cannot be had"), "\(listener.diagnostics)")
    }
}

extension PoolTakeoverIntegrationTests {
    /// A site for a takeover: the coordinator, `w1` hosting `cam0/left` (squat), `w2` joined
    /// after with room for one session, a listener following the session's events from the
    /// beginning until it has every event `kinesia analyze` finds in `source`, and the camera's
    /// ingest publishing `source` at `speed` (journaled, serving replay after its end). With
    /// `secondState`, `w2` keeps its state there (a worker of another box: nothing of `w1`'s
    /// state directory is its).
    static func startTakeoverSite(
        _ topology: Topology, source: String, speed: Int, secondState: String? = nil
    ) async throws -> (
        coordinator: KinesiaProcess, first: KinesiaProcess, second: KinesiaProcess, expected: [String],
        listener: KinesiaProcess, ingest: KinesiaProcess
    ) {
        let state = topology.directory + "/state"
        let (coordinator, first) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        // The second worker joins after the placement, with room for one session.
        let second = try topology.start(
            "w2",
            [
                "worker", "--pool", "default", "--name", "w2", "--capacity", "1", "--state",
                secondState ?? state,
            ])
        #expect(
            await coordinator.waitForError(containing: "worker w2 joined pool default"),
            "\(coordinator.diagnostics)")
        let (expected, listener) = try await ControlPlaneIntegrationTests.listenToRunOne(
            topology, source: source)
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", source, "--speed", String(speed), "--keep-serving",
                "--state", state,
            ])
        return (coordinator, first, second, expected, listener, ingest)
    }
}

/// A pool worker paused past its lease (SIGSTOP) loses its session to another worker; when it
/// comes back (SIGCONT) it gives the session up without ending its run: the run goes on on the
/// other worker, and only the stop that ends it is announced, once.
@Suite(.serialized, .tags(.process))
struct PausedWorkerIntegrationTests {
    @Test func aWorkerPausedPastItsLeaseGivesTheSessionUpWithoutEndingItsRun() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (coordinator, first) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        let runs = try await topology.startListener(
            "runs", ["session/cam0/left/", "--format", "json"])
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        let second = try topology.start(
            "w2", ["worker", "--pool", "default", "--name", "w2", "--state", state])
        #expect(
            await coordinator.waitForError(containing: "worker w2 joined pool default"),
            "\(coordinator.diagnostics)")

        first.signal(SIGSTOP)
        #expect(
            await coordinator.waitForError(
                containing: "cam0/left (run 1) goes to worker w2", timeout: .seconds(60)),
            "\(coordinator.diagnostics)")
        first.signal(SIGCONT)
        #expect(
            await first.waitForError(containing: "session cam0/left (run 1) stopped", timeout: .seconds(60)),
            "\(first.diagnostics)")
        // w2 hosts it (it took the journal from w1 while w1 was paused).
        #expect(
            await second.waitForError(containing: "hosting cam0/left=squat:left", timeout: .seconds(60)),
            "\(second.diagnostics)\n\(first.diagnostics)")
        // A plain live listener gets what a publisher sends once the broker's subscriptions have
        // reached its new socket (ZeroMQ's slow joiner: a few ms, more on a loaded box); the
        // run's end is sent when the session stops, so the stop waits a second.
        try await Task.sleep(for: .seconds(1))
        let stop = try await ControlPlaneIntegrationTests.session(topology, "stop", ["stop", "cam0/left"])
        #expect(stop.status == 0 && stop.output.contains("run 1 on worker w2"), "\(stop)")
        #expect(
            await second.waitForError(containing: "session/cam0/left/: run 1 ended (stopped)"),
            "\(second.diagnostics)")
        try await Task.sleep(for: .seconds(1))
        #expect(await runs.stop() == 0, "\(runs.diagnostics)")
        let types = runs.outputLines.compactMap { line in
            line.components(separatedBy: "\"type\":\"").dropFirst().first?.prefix { $0 != "\"" }
        }.map(String.init)
        #expect(types == ["runStarted", "runEnded"], "\(runs.outputLines)")
        #expect(
            runs.outputLines.last?.contains("\"reason\":\"stopped\"") == true, "\(runs.outputLines)")
        #expect(!first.errorText.contains("run 1 ended"), "\(first.diagnostics)")
    }
}

/// The control plane on a TCP bus with keys: the coordinator beside the broker behind the same
/// CURVE and allowed keys; a pool worker reports with its worker key; a key of the control role
/// commands sessions, and a consumer's key is refused, with nothing changed.
@Suite(.serialized, .tags(.process))
struct SecureControlPlaneTests {
    @Test func onATCPBusOnlyAControlKeyCommandsSessions() async throws {
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        _ = try await topology.startBroker()
        let coordinator = try topology.start("coordinator", ["coordinator", "--state", state])
        #expect(
            await coordinator.waitForError(containing: "coordinating on tcp://127.0.0.1:"),
            "\(coordinator.diagnostics)")
        let worker = try topology.start(
            "w1", ["worker", "--pool", "default", "--name", "w1", "--state", state])
        #expect(
            await coordinator.waitForError(containing: "worker w1 joined pool default"),
            "\(coordinator.diagnostics)\n\(worker.diagnostics)")

        let started = try await ControlPlaneIntegrationTests.session(
            topology, "start", ["start", "cam0/left", "--exercise", "squat", "--side", "left"])
        #expect(
            started.status == 0
                && started.output
                    == "cam0/left started on worker w1 (run 1); no ingest is heard publishing cam0: the run begins at its first pose",
            "\(started)\n\(coordinator.diagnostics)")
        #expect(coordinator.errorText.contains("from the key control/reception: start"))

        // The command line refuses a key of another role itself; a program that sends anyway
        // with a consumer's key (an allowed key) reaches the coordinator and is refused there.
        let refusedLocally = try topology.start(
            "consumer-stop",
            [
                "session", "stop", "cam0/left", "--bus", topology.bus, "--key", keys.secret(keys.consumer),
                "--server-key", keys.brokerPublic,
            ], addingBus: false)
        #expect(await refusedLocally.waitForExit(timeout: .seconds(60)) == 1, "\(refusedLocally.diagnostics)")
        #expect(refusedLocally.errorText.contains("is a consumer key; this process needs a control key"))
        let context = try ZMQContext()
        defer { context.terminate() }
        func ask(with key: BusKey, _ command: String) throws -> [UInt8]? {
            var bus = try BusAddress(parsing: topology.bus)
            bus.credentials = keys.credentials(key)
            let dealer = try ZMQSocket(.dealer, context: context, linger: .zero)
            defer { dealer.close() }
            try dealer.secure(for: bus)
            try dealer.connect(bus.controlEndpoint)
            try dealer.send([Array(command.utf8)])
            return try dealer.receive(timeout: .seconds(3))?.last
        }
        let answer = try ask(
            with: keys.consumer, #"{"type":"request","id":"c-1","command":"stop","session":"cam0/left"}"#)
        let text = answer.map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(text.contains(#""outcome":"notAllowed""#), "\(text)")
        #expect(
            text.contains("the key consumer/tablet may not command sessions: it needs the control role"),
            "\(text)")
        // A worker's key may report, not command; a key the broker does not allow gets no answer.
        let asWorker = try ask(with: keys.worker, #"{"type":"request","id":"w-1","command":"list"}"#)
        #expect(asWorker.map { String(decoding: $0, as: UTF8.self) }?.contains("notAllowed") == true)
        #expect(try ask(with: keys.stranger, #"{"type":"request","id":"s-1","command":"list"}"#) == nil)
        // A consumer's forged worker report is dropped: no worker joins.
        _ = try ask(
            with: keys.consumer,
            #"{"type":"workerReport","worker":"forged","pool":"default","capacity":8,"epoch":"0","sessions":[]}"#
        )
        #expect(!coordinator.errorText.contains("worker forged joined"), "\(coordinator.diagnostics)")
        // Another worker key cannot report as w1 (a name is the key's it first reported with): no
        // lease, no sessions, refused and counted.
        let otherWorker = BusKey(name: "ward-2", role: .worker, keyPair: try CurveKeyPair.generate())
        try AllowedKeys.allow(otherWorker.publicKey, in: keys.allowed)
        let asW1 = try ask(
            with: otherWorker,
            #"{"type":"workerReport","worker":"w1","pool":"default","capacity":8,"epoch":"0","report":"1","sessions":[]}"#
        )
        #expect(asW1 == nil, "no lease for it")
        #expect(
            coordinator.errorText.contains("a report as worker w1 from the key worker/ward-2 refused"),
            "\(coordinator.diagnostics)")
        // A worker key with a .pools file reports for those pools only.
        try "# the gym's workers\ngym\n".write(
            toFile: keys.allowed + "/worker/ward-2.pools", atomically: true, encoding: .utf8)
        _ = try ask(
            with: otherWorker,
            #"{"type":"workerReport","worker":"w9","pool":"default","capacity":8,"epoch":"0","report":"2","sessions":[]}"#
        )
        #expect(
            coordinator.errorText.contains(
                "a report as worker w9 of pool default from the key worker/ward-2 refused: the key may not join that pool"
            ),
            "\(coordinator.diagnostics)")
        let inGym = try ask(
            with: otherWorker,
            #"{"type":"workerReport","worker":"w9","pool":"gym","capacity":8,"epoch":"0","report":"3","sessions":[]}"#
        )
        #expect(inGym.map { String(decoding: $0, as: UTF8.self) }?.contains(#""type":"lease""#) == true)
        #expect(
            await coordinator.waitForError(containing: "worker w9 joined pool gym"),
            "\(coordinator.diagnostics)")

        let list = try await ControlPlaneIntegrationTests.session(topology, "list", ["list"])
        #expect(list.output.contains("cam0/left") && list.output.contains("running"), "\(list)")
        let stop = try await ControlPlaneIntegrationTests.session(topology, "stop", ["stop", "cam0/left"])
        #expect(stop.status == 0 && stop.output == "cam0/left stopped (run 1 on worker w1)", "\(stop)")

        // The Python client on the same TCP bus, with the control key: the same commands.
        let script = """
            import sys
            from kinesia.control import ControlClient
            client = ControlClient(sys.argv[1], key=sys.argv[2], server_key=sys.argv[3])
            for answer in (client.start("cam0/right", exercise="squat", side="right"), client.list(),
                           client.stop("cam0/right")):
                print(answer.outcome, answer.exit_code, answer.run)
            """
        let output = topology.directory + "/python.out"
        let errors = topology.directory + "/python.err"
        let python = try TestProcess(
            executable: try PackagePaths.python(),
            arguments: ["-c", script, topology.bus, keys.secret(keys.control), keys.brokerPublic],
            environment: ProcessInfo.processInfo.environment, standardOutput: output, standardError: errors)
        #expect(await python.waitForExit(timeout: .seconds(30)) == 0, "\(TestProcess.readFile(errors))")
        #expect(
            TestProcess.readFile(output).split(separator: "\n") == [
                "started 0 2", "listed 0 None", "stopped 0 2",
            ],
            "\(TestProcess.readFile(errors))")
    }
}

/// The coordinator under a flood of foreign, broken and valid messages: each broken one is
/// refused and counted, each request with an id answered, and the site keeps answering.
@Suite(.serialized, .tags(.process))
struct ControlFloodTests {
    @Test func aFloodOfBrokenAndValidMessagesIsCountedAnsweredAndNothingElseChanges() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        _ = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        let started = try await ControlPlaneIntegrationTests.session(
            topology, "start", ["start", "cam0/left", "--exercise", "squat", "--side", "left"])
        #expect(started.status == 0, "\(started)")
        let health = try HealthWatch(bus: topology.bus)

        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try ZMQSocket(.dealer, context: context, linger: .zero)
        defer { socket.close() }
        try socket.set(.sendHighWaterMark, 0)
        try socket.set(.receiveHighWaterMark, 0)
        try socket.connect("ipc://\(topology.bus)/control.sock")
        let broken: [[UInt8]] = [
            Array("not json".utf8), [0xFF, 0x00, 0x7B], [],
            Array(#"{"type":"answer","id":"x1","outcome":"started","message":""}"#.utf8),
            Array(
                #"{"type":"request","id":"x2","command":"start","session":"cam0/left","exercise":"jump","side":"left"}"#
                    .utf8),
            Array(#"{"type":"request","id":"x3","command":"stop","session":"../etc"}"#.utf8),
            Array(
                #"{"type":"workerReport","worker":"w9","pool":"p","capacity":-5,"epoch":"0","sessions":[]}"#
                    .utf8),
            [UInt8](repeating: UInt8(ascii: "["), count: 100_000),
        ]
        let rounds = 200
        for round in 0..<rounds {
            for message in broken { try socket.send([message]) }
            try socket.send([Array(#"{"type":"request","id":"list-\#(round)","command":"list"}"#.utf8)])
        }
        // Two frames in one message: refused too.
        try socket.send([Array("a".utf8), Array("b".utf8)])
        var listed = 0
        var invalid = 0
        while listed < rounds, let frames = try socket.receive(timeout: .seconds(60)) {
            let text = String(decoding: frames[0], as: UTF8.self)
            if text.contains(#""outcome":"listed""#) {
                #expect(text.contains(#""session":"cam0/left""#))
                listed += 1
            } else if text.contains(#""outcome":"invalid""#) {
                invalid += 1
            }
        }
        #expect(listed == rounds, "every valid request answered")
        let report = await health.wait(for: "coordinator", timeout: .seconds(60)) {
            ($0.counters["malformed"] ?? 0) >= broken.count * rounds + 1
        }
        #expect(report != nil, "\(health.latest["coordinator"]?.counters ?? [:])")
        #expect(report?.counters["malformed"] == broken.count * rounds + 1)
        // Requests with an id are answered `invalid`, saying why (x1..x3 each round).
        while invalid < 3 * rounds, let frames = try socket.receive(timeout: .seconds(60)) {
            if String(decoding: frames[0], as: UTF8.self).contains(#""outcome":"invalid""#) { invalid += 1 }
        }
        #expect(invalid == 3 * rounds)
        // The session is untouched.
        let list = try await ControlPlaneIntegrationTests.session(topology, "list", ["list"])
        #expect(list.output.contains("cam0/left") && list.output.contains("running"), "\(list.output)")
    }
}

/// `kinesia up deploy/clinic.json` as shipped: a coordinator and two pool workers with no
/// session; sessions started with `kinesia session` run, a pool worker killed is restarted by
/// `up` and gets its sessions back, and the shutdown is clean.
@Suite(.serialized, .tags(.process))
struct ClinicDeployTests {
    @Test(.timeLimit(.minutes(2)))
    func theClinicTopologyTakesSessionsAtRuntimeAndGivesThemBackToARestartedWorker() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        var text = try String(contentsOf: PackagePaths.url("deploy/clinic.json"), encoding: .utf8)
        #expect(text.contains("\"kinesia-clinic.db\"") && text.hasPrefix("{\n"))
        text = text.replacingOccurrences(
            of: "\"kinesia-clinic.db\"", with: "\"\(topology.directory)/clinic.db\"")
        text = "{\n  \"bus\": \"\(topology.bus)\",\n" + text.dropFirst(2)
        let file = topology.directory + "/clinic.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = topology.directory + "/state"
        let up = try topology.start("up", ["up", file], addingBus: false, environment: environment)
        #expect(await up.waitForError(containing: "worker worker-b joined pool clinic"), "\(up.diagnostics)")
        #expect(await up.waitForError(containing: "worker worker-a joined pool clinic"), "\(up.diagnostics)")

        for (name, side) in [("left", "left"), ("right", "right")] {
            let started = try await ControlPlaneIntegrationTests.session(
                topology, "start-\(name)",
                [
                    "start", "cam0/\(name)", "--exercise", "shoulderAbduction", "--side", side, "--pool",
                    "clinic",
                ])
            #expect(started.status == 0 && started.output.contains("started on worker worker-"), "\(started)")
        }
        func list() async throws -> [String] {
            let list = try await ControlPlaneIntegrationTests.session(topology, "list", ["list"])
            // The first eight columns: the counts change as the camera goes on.
            return list.output.split(separator: "\n").dropFirst().map {
                $0.split(separator: " ").prefix(8).joined(separator: " ")
            }
        }
        let rows = try await list()
        #expect(rows.count == 2 && rows.allSatisfy { $0.hasSuffix("running") }, "\(rows)")
        // Both on one worker: the camera's sessions are kept together.
        let host = rows.first?.split(separator: " ")[5] ?? ""
        #expect(rows.allSatisfy { $0.split(separator: " ")[5] == host }, "\(rows)")

        // The worker killed is restarted by up, and the coordinator gives it its sessions back.
        let pids = up.errorText.split(separator: "\n").filter { $0.contains("started \(host) (pid ") }
        let pid = Int32(pids.last?.split(separator: "pid ").last?.dropLast() ?? "") ?? 0
        #expect(pid > 0, "\(up.diagnostics)")
        kill(pid, SIGKILL)
        #expect(await up.waitForError(containing: "restarting \(host)"), "\(up.diagnostics)")
        // The restarted worker starts both sessions again, at the same runs.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        func restarts() -> Int {
            ["left", "right"].map { name in
                up.errorText.components(separatedBy: "session cam0/\(name) (run ").count - 2
            }.min() ?? 0
        }
        while restarts() < 1, clock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(restarts() == 1, "\(up.diagnostics)")
        var again: [String] = []
        let until = ContinuousClock.now + .seconds(60)  // a bound against a hang only
        while ContinuousClock.now < until {
            again = try await list()
            if again.count == 2, again.allSatisfy({ $0.hasSuffix("running") }) { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(again == rows, "the same sessions, runs and worker")
        #expect(
            again.count == 2 && again.allSatisfy { $0.hasSuffix("running") }, "\(again)\n\(up.diagnostics)")
        up.signal(SIGTERM)
        #expect(await up.waitForExit(timeout: .seconds(30)) == 0, "\(up.diagnostics)")
    }
}
