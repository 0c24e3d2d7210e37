import Foundation
import KinesiaStore
import KinesiaTestSupport
import Testing

/// The control plane's chaos variant: sessions started, stopped and reset on a running site
/// while the coordinator and the pool's workers are killed (`kill -9`) and restarted between
/// the commands. Every run ends once, and each run's recorded events are exactly what
/// `kinesia analyze` finds in the camera's poses between the run's first and last pose (read
/// from the camera's journal: `journal:STATE,stream=S,first=F,last=L`).
///
/// The seed is random and printed; `KINESIA_CHAOS_SEED=N` replays a run's choices.
@Suite(.serialized, .tags(.process))
struct ControlPlaneChaosTests {
    /// What the day does between two waits.
    enum Step: CustomStringConvertible {
        case start(String), stop(String), reset(String)
        case killCoordinator, killWorker(String)

        var description: String {
            switch self {
            case .start(let name): "start cam0/\(name)"
            case .stop(let name): "stop cam0/\(name)"
            case .reset(let name): "reset cam0/\(name)"
            case .killCoordinator: "kill -9 the coordinator"
            case .killWorker(let name): "kill -9 worker \(name)"
            }
        }
    }

    static let sessions = ["left", "right"]
    static let workers = ["w1", "w2"]

    /// The steps of a day of `count` steps: a command or a kill, by turns at random.
    static func steps(_ count: Int, seed: UInt64) -> [Step] {
        var random = SplitMix64(seed: seed)
        var running: Set<String> = []
        var steps: [Step] = []
        // Every chaos step is a kill; the commands keep at least one run going.
        for index in 0..<count {
            if index % 2 == 1 {
                steps.append(
                    Bool.random(using: &random)
                        ? .killCoordinator : .killWorker(workers.randomElement(using: &random)!))
                continue
            }
            let name = sessions.randomElement(using: &random)!
            if !running.contains(name) {
                running.insert(name)
                steps.append(.start(name))
            } else if Bool.random(using: &random) {
                steps.append(.reset(name))
            } else {
                running.remove(name)
                steps.append(.stop(name))
            }
        }
        return steps
    }

    @Test(.timeLimit(.minutes(5)))
    func everyRunCommandedThroughKillsIsAnalyzeOnItsOwnPoses() async throws {
        let seed =
            ProcessInfo.processInfo.environment["KINESIA_CHAOS_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(Int32.max))
        let steps = Self.steps(16, seed: seed)
        let context = "seed \(seed) (KINESIA_CHAOS_SEED=\(seed) replays it): \(steps)"
        print("control chaos: \(context)")

        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        var (coordinator, firstWorker) = try await ControlPlaneIntegrationTests.startSite(
            topology, state: state)
        var workers = ["w1": firstWorker]
        let second = try topology.start(
            "w2", ["worker", "--pool", "default", "--name", "w2", "--state", state])
        #expect(await coordinator.waitForError(containing: "worker w2 joined pool default"), "\(context)")
        workers["w2"] = second
        let database = topology.directory + "/record.db"
        let record = try topology.start("record", ["record", "--db", database, "--camera", "cam0"])
        #expect(await record.waitForError(containing: "recording cam0"), "\(record.diagnostics)")
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", "sim:squat,seed=5", "--loop", "--speed", "2",
                "--keep-serving", "--state", state,
            ])
        // (It waits for the first session's subscription: the first run begins at its first pose.)
        #expect(ingest.isRunning, "\(ingest.diagnostics)")

        var running: Set<String> = []  // the sessions started (named after their sides)
        var runs: Set<UInt64> = []
        var random = SplitMix64(seed: seed ^ 0x5eed)
        var restarts = 0

        /// The run numbers an answer names: "(run 3)", "run 2 ended, run 4 started".
        func runNumbers(_ text: String) -> [UInt64] {
            text.components(separatedBy: "run ").dropFirst().compactMap { UInt64($0.prefix { $0.isNumber }) }
        }
        /// Waits until the coordinator lists every running session as running on a live worker.
        func settled() async throws -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(30)
            while clock.now < deadline {
                let list = try await ControlPlaneIntegrationTests.session(topology, "list", ["list"])
                let rows = list.output.split(separator: "\n").dropFirst().map { $0.split(separator: " ") }
                let live = rows.filter { row in
                    row.count >= 8 && row[7] == "running" && workers[String(row[5])]?.isRunning == true
                }
                if live.count == running.count,
                    Set(live.map { String($0[0].dropFirst(5)) }) == running
                {
                    return true
                }
                try await Task.sleep(for: .milliseconds(250))
            }
            return false
        }

        for step in steps {
            switch step {
            case .start(let name):
                let started = try await ControlPlaneIntegrationTests.session(
                    topology, "start-\(name)",
                    ["start", "cam0/\(name)", "--exercise", "squat", "--side", name, "--timeout", "10"])
                #expect(started.status == 0, "\(step): \(started) \(context)")
                runs.formUnion(runNumbers(started.output))
                running.insert(name)
            case .stop(let name):
                let stopped = try await ControlPlaneIntegrationTests.session(
                    topology, "stop-\(name)", ["stop", "cam0/\(name)", "--timeout", "10"])
                #expect(stopped.status == 0, "\(step): \(stopped) \(context)")
                running.remove(name)
            case .reset(let name):
                let reset = try await ControlPlaneIntegrationTests.session(
                    topology, "reset-\(name)", ["reset", "cam0/\(name)", "--timeout", "10"])
                #expect(
                    reset.status == 0 && reset.output.contains(" started"), "\(step): \(reset) \(context)")
                runs.formUnion(runNumbers(reset.output))
            case .killCoordinator:
                coordinator.signal(SIGKILL)
                _ = await coordinator.waitForExit()
                restarts += 1
                coordinator = try topology.start(
                    "coordinator-\(restarts)", ["coordinator", "--state", state])
                #expect(
                    await coordinator.waitForError(containing: "coordinating on"),
                    "\(coordinator.diagnostics)")
            case .killWorker(let name):
                let worker = workers[name]!
                worker.signal(SIGKILL)
                _ = await worker.waitForExit()
                restarts += 1
                let again = try topology.start(
                    "\(name)-\(restarts)", ["worker", "--pool", "default", "--name", name, "--state", state])
                #expect(await again.waitForError(containing: "reporting to"), "\(again.diagnostics)")
                workers[name] = again
            }
            // Nothing goes on until the site has every session back; then the camera plays on.
            #expect(try await settled(), "after \(step): \(context)\n\(topology.diagnostics)")
            try await Task.sleep(for: .milliseconds(Int.random(in: 800...2000, using: &random)))
        }
        for name in running.sorted() {
            let stopped = try await ControlPlaneIntegrationTests.session(
                topology, "stop-\(name)-end", ["stop", "cam0/\(name)", "--timeout", "10"])
            #expect(stopped.status == 0, "\(stopped) \(context)")
        }

        // Every run started and ended once, in the record.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var rows: [(streamID: UInt64, camera: String, session: String, json: String)] = []
        func ends() -> [String] { rows.map(\.json).filter { $0.hasPrefix("{\"type\":\"runEnded\"") } }
        while clock.now < deadline {
            rows = (try? RecordStore(readingOnly: database).runLines()) ?? []
            if ends().count >= runs.count { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(!runs.isEmpty)
        let started = rows.map(\.json).filter { $0.hasPrefix("{\"type\":\"runStarted\"") }
        #expect(started.count == runs.count, "runs \(runs.sorted()): \(rows.map(\.json)) \(context)")
        #expect(ends().count == runs.count, "runs \(runs.sorted()): \(rows.map(\.json)) \(context)")
        #expect(Set(ends().compactMap { Self.field("run", in: $0).flatMap { UInt64($0) } }) == runs)

        // Each run's events are kinesia analyze's on the run's own poses.
        let store = try RecordStore(readingOnly: database)
        var compared = 0
        for end in ends() {
            let run = try #require(Self.field("run", in: end).flatMap { UInt64($0) })
            let session = try #require(Self.field("session", in: end))
            let first = try #require(Self.pose("firstPose", in: end), "\(end)")
            let last = try #require(Self.pose("lastPose", in: end), "\(end)")
            #expect(first.stream == last.stream, "\(end)")
            let stream = try #require(rows.first { $0.json.contains("\"run\":\"\(run)\"") }?.streamID)
            let recorded = try store.eventLines(camera: "cam0", session: session, streamID: stream)
            let oracle = try await Oracle.run(
                source:
                    "journal:\(state),stream=\(first.stream),first=\(first.sequence),last=\(last.sequence)",
                exercise: "squat", side: session)
            #expect(recorded == oracle.events, "run \(run) (\(end)): \(context)")
            let repCount = oracle.summary.components(separatedBy: "\"repCount\":").last?.prefix {
                $0.isNumber
            }
            #expect(end.contains("\"repCount\":\(repCount ?? ""),"), "run \(run): \(end) \(oracle.summary)")
            compared += recorded.isEmpty ? 0 : 1
        }
        #expect(compared >= 1, "some run recorded events: \(context)")
        print(
            "control chaos: \(runs.count) runs (\(compared) with events), \(restarts) kills; seed \(seed)")
    }

    /// The string value of `"name":"..."` in a JSON line.
    static func field(_ name: String, in line: String) -> String? {
        line.components(separatedBy: "\"\(name)\":\"").dropFirst().first.map {
            String($0.prefix { $0 != "\"" })
        }
    }

    /// `"name":{"stream":"S","sequence":"N"}` in a JSON line.
    static func pose(_ name: String, in line: String) -> (stream: String, sequence: UInt64)? {
        guard
            let object = line.components(separatedBy: "\"\(name)\":{").dropFirst().first?.prefix(while: {
                $0 != "}"
            }),
            let stream = field("stream", in: "{" + object), let sequence = field("sequence", in: "{" + object)
        else { return nil }
        return UInt64(sequence).map { (stream, $0) }
    }
}
