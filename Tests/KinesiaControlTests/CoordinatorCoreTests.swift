import KinesiaControl
import KinesiaMotion
import Testing

/// The coordinator's decisions, with no I/O and the time passed in.
struct CoordinatorCoreTests {
    typealias Action = CoordinatorCore.Action

    static func plan(
        _ key: String, exercise: String = "squat", side: SessionPlan.Analysis = .left, patient: String? = nil,
        pool: String = "default", worker: String? = nil
    ) throws -> SessionPlan {
        try SessionPlan(
            key: SessionKey(parsing: key), exerciseFile: SessionPlan.catalogExercise(exercise),
            analysis: side,
            patient: patient, pool: pool, worker: worker)
    }

    static func request(_ id: String, _ command: ControlRequest.Command) throws -> ControlRequest {
        try ControlRequest(id: id, command: command)
    }

    static let client: CoordinatorCore.Peer = [1]

    /// A core driven like the service drives it, keeping what it was told to send.
    struct Harness {
        var core: CoordinatorCore
        var now: Duration = .zero
        var actions: [Action] = []

        init(
            plans: [SessionPlan] = [], configuration: CoordinatorCore.Configuration = .init(startGrace: .zero)
        ) {
            core = CoordinatorCore(
                plans: plans, nextRun: 1, epoch: 0, now: .zero, configuration: configuration)
        }

        mutating func send(_ request: ControlRequest, from peer: CoordinatorCore.Peer = client) -> [Action] {
            actions = []
            core.receive(request, from: peer, now: now, into: &actions)
            return actions
        }

        mutating func report(
            _ worker: String, pool: String = "default", capacity: Int = 8, _ sessions: [(String, UInt64)] = []
        ) throws -> [Action] {
            actions = []
            let running = try sessions.map {
                WorkerReport.Running(key: try SessionKey(parsing: $0.0), run: $0.1)
            }
            core.receive(
                WorkerReport(worker: worker, pool: pool, capacity: capacity, sessions: running),
                from: Array(worker.utf8), now: now, into: &actions)
            return actions
        }

        mutating func tick(to time: Duration) -> [Action] {
            now = time
            actions = []
            core.tick(now: now, into: &actions)
            return actions
        }
    }

    static func answers(_ actions: [Action]) -> [ControlAnswer] {
        actions.compactMap { if case .answer(let answer, _) = $0 { answer } else { nil } }
    }

    static func assignments(_ actions: [Action]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for case .assign(let assignment, let worker, _) in actions {
            result[worker] = assignment.sessions.map { "\($0.key)@\($0.run)" }
        }
        return result
    }

    @Test func aStartWithNoLiveWorkerIsRefusedAndNothingIsKept() throws {
        var harness = Harness()
        let actions = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        #expect(actions.count == 1)
        let answer = try #require(Self.answers(actions).first)
        #expect(answer.outcome == .noLiveWorker)
        #expect(answer.message == "no live worker in pool default")
        #expect(answer.outcome.exitCode == 1)
        #expect(harness.core.plans.isEmpty)
    }

    @Test func aStartIsKeptAssignedAndAnsweredWhenTheWorkerConfirms() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        let actions = harness.send(try Self.request("r1", .start(Self.plan("cam0/left", patient: "p-17"))))
        // Kept before it is sent.
        guard case .savePlan(let kept) = actions.first else {
            Issue.record("first action \(String(describing: actions.first))")
            return
        }
        #expect(kept.run == 1 && kept.patient == "p-17")
        #expect(Self.assignments(actions) == ["w1": ["cam0/left@1"]])
        #expect(Self.answers(actions).isEmpty)
        #expect(harness.core.statuses.map(\.state) == [.assigned])
        // The worker's heartbeat shows the session at its run: the answer goes.
        let confirmed = try harness.report("w1", [("cam0/left", 1)])
        let answer = try #require(Self.answers(confirmed).first)
        #expect(answer.outcome == .started && answer.worker == "w1" && answer.run == 1)
        #expect(
            answer.message
                == "cam0/left started on worker w1 (run 1); no ingest is heard publishing cam0: the run begins at its first pose"
        )
        #expect(Self.assignments(confirmed).isEmpty)
        #expect(harness.core.statuses.map(\.state) == [.running])
    }

    @Test func aRequestSentAgainIsAnsweredTheSameAndStartsNothingTwice() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        let start = try Self.request("r1", .start(Self.plan("cam0/left")))
        _ = harness.send(start)
        // Sent again while waiting: answered with the first, to both.
        #expect(harness.send(start, from: [9]).isEmpty)
        let confirmed = try harness.report("w1", [("cam0/left", 1)])
        #expect(
            confirmed.compactMap { if case .answer(_, let peer) = $0 { peer } else { nil } } == [
                Self.client, [9],
            ])
        // Sent again after the answer: the same answer, nothing else.
        let again = harness.send(start)
        #expect(again.count == 1)
        #expect(Self.answers(again).first?.outcome == .started)
        #expect(harness.core.plans.count == 1)
        // Another request for the same session: already running.
        let other = harness.send(try Self.request("r2", .start(Self.plan("cam0/left"))))
        let answer = try #require(Self.answers(other).first)
        #expect(answer.outcome == .alreadyRunning && answer.run == 1)
        #expect(answer.message == "cam0/left already runs (run 1 on worker w1): stop it first, or reset it")
    }

    @Test func stopAndResetEndTheRunAndAreConfirmedByTheWorker() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        _ = try harness.report("w1", [("cam0/left", 1)])
        let reset = harness.send(try Self.request("r2", .reset(SessionKey(parsing: "cam0/left"))))
        #expect(Self.assignments(reset) == ["w1": ["cam0/left@2"]])
        let resetDone = try #require(Self.answers(try harness.report("w1", [("cam0/left", 2)])).first)
        #expect(resetDone.outcome == .reset && resetDone.run == 2)
        #expect(resetDone.message == "cam0/left reset: run 1 ended, run 2 started on worker w1")

        let stop = harness.send(try Self.request("r3", .stop(SessionKey(parsing: "cam0/left"))))
        guard case .removePlan(let key) = stop.first else {
            Issue.record("first action \(String(describing: stop.first))")
            return
        }
        #expect(key.description == "cam0/left")
        #expect(Self.assignments(stop) == ["w1": []])
        #expect(Self.answers(try harness.report("w1", [("cam0/left", 2)])).isEmpty)
        let stopped = try #require(Self.answers(try harness.report("w1")).first)
        #expect(stopped.outcome == .stopped && stopped.run == 2)

        let unknown = harness.send(try Self.request("r4", .stop(SessionKey(parsing: "cam0/left"))))
        #expect(Self.answers(unknown).first?.outcome == .notRunning)
        #expect(Self.answers(unknown).first?.message == "cam0/left does not run")
    }

    @Test func aBaselineStartsANewRunThatBeginsWithItAndAResetAfterItDoesNot() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        _ = try harness.report("w1", [("cam0/left", 1)])
        let key = try SessionKey(parsing: "cam0/left")

        let baseline = harness.send(try Self.request("r2", .baseline(key, reps: 2)))
        let sent = baseline.compactMap { if case .assign(let a, _, _) = $0 { a.sessions } else { nil } }.first
        #expect(sent?.map(\.run) == [2])
        #expect(sent?.first?.baselineReps == 2)
        #expect(
            baseline.contains { if case .savePlan(let plan) = $0 { plan.baselineReps == 2 } else { false } })
        let done = try #require(Self.answers(try harness.report("w1", [("cam0/left", 2)])).first)
        #expect(done.outcome == .baselineStarted && done.run == 2)
        #expect(
            done.message == "cam0/left baseline of 2 reps started: run 1 ended, run 2 started on worker w1")

        // No number: the exercise's own, told in the plan.
        _ = harness.send(try Self.request("r3", .baseline(key, reps: nil)))
        #expect(harness.core.plans[key]?.baselineReps == Exercise.squat.sessionRules.baselineReps)
        #expect(harness.core.plans[key]?.run == 3)

        // A reset's new run begins with no baseline.
        _ = harness.send(try Self.request("r4", .reset(key)))
        #expect(harness.core.plans[key]?.baselineReps == nil)
        #expect(harness.core.plans[key]?.run == 4)

        let unknown = harness.send(try Self.request("r5", .baseline(SessionKey(parsing: "cam9/x"), reps: 3)))
        #expect(Self.answers(unknown).first?.outcome == .notRunning)
    }

    /// A command that changes the desired state is kept with its answer; a coordinator
    /// restarted with what was kept answers the same request id the same, and does nothing.
    @Test func aCommandKeptWithItsAnswerIsDoneOnceAcrossARestart() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        let start = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        var kept = start.compactMap { if case .rememberRequest(let answer) = $0 { answer } else { nil } }
        #expect(kept.map(\.outcome) == [.started] && kept.first?.run == 1, "\(start)")
        let key = try SessionKey(parsing: "cam0/left")
        let reset = harness.send(try Self.request("r2", .reset(key)))
        kept += reset.compactMap { if case .rememberRequest(let answer) = $0 { answer } else { nil } }
        let refused = harness.send(try Self.request("r3", .start(Self.plan("cam0/left"))))
        #expect(!refused.contains { if case .rememberRequest = $0 { true } else { false } })

        var restarted = CoordinatorCore(
            plans: Array(harness.core.plans.values), nextRun: 3, epoch: 5, now: .zero,
            configuration: .init(startGrace: .zero), answers: kept)
        var actions: [Action] = []
        restarted.receive(try Self.request("r2", .reset(key)), from: Self.client, now: .zero, into: &actions)
        #expect(Self.answers(actions).map(\.run) == [2], "\(actions)")
        #expect(!actions.contains { if case .savePlan = $0 { true } else { false } })
        #expect(restarted.plans[key]?.run == 2)
    }

    /// A start for a camera no ingest is heard publishing is done all the same (the camera may
    /// come after its sessions), and its answer says so; one whose ingest was heard within 5 s
    /// says nothing of it.
    @Test func aStartSaysWhenNoIngestIsHeardPublishingItsCamera() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        harness.core.cameraPublishes("cam0", now: .zero)
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        _ = harness.send(try Self.request("r2", .start(Self.plan("cam9/left"))))
        let answers = Self.answers(try harness.report("w1", [("cam0/left", 1), ("cam9/left", 2)]))
        #expect(
            answers.map(\.message).sorted() == [
                "cam0/left started on worker w1 (run 1)",
                "cam9/left started on worker w1 (run 2); no ingest is heard publishing cam9: the run begins at its first pose",
            ])
        // Heard last more than 5 s ago: said again.
        harness.now = .seconds(6)
        _ = harness.send(try Self.request("r3", .start(Self.plan("cam0/right", side: .right))))
        let later = Self.answers(
            try harness.report("w1", [("cam0/left", 1), ("cam9/left", 2), ("cam0/right", 3)]))
        #expect(
            later.first?.message.hasSuffix(
                "no ingest is heard publishing cam0: the run begins at its first pose") == true)
    }

    /// A run started while no ingest is heard publishing its camera begins at the camera's
    /// stream's first pose: its plan says so, as kept and as sent to the worker, and so does the
    /// plan given to a taker; a run started while one is heard does not, nor does a reset's run.
    @Test func aStartForACameraNobodyPublishesBeginsAtTheStreamsStart() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        harness.core.cameraPublishes("cam0", now: .zero)
        let heard = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        let quiet = harness.send(try Self.request("r2", .start(Self.plan("cam9/left"))))
        func sent(_ actions: [Action]) -> [String: Bool] {
            var flags: [String: Bool] = [:]
            for case .assign(let assignment, _, _) in actions {
                for plan in assignment.sessions { flags[plan.key.description] = plan.beginsAtStreamStart }
            }
            return flags
        }
        func kept(_ actions: [Action]) -> [Bool] {
            actions.compactMap { if case .savePlan(let plan) = $0 { plan.beginsAtStreamStart } else { nil } }
        }
        #expect(kept(heard) == [false] && kept(quiet) == [true])
        #expect(sent(quiet) == ["cam0/left": false, "cam9/left": true])
        // Its worker gone, the taker is given the same plan.
        _ = try harness.report("w1", [("cam0/left", 1), ("cam9/left", 2)])
        harness.now = .milliseconds(3500)
        let taken = try harness.report("w2") + harness.tick(to: .seconds(4))
        #expect(sent(taken) == ["cam0/left": false, "cam9/left": true], "\(taken)")
        // A reset's run begins at the first pose its worker receives.
        let reset = harness.send(try Self.request("r3", .reset(SessionKey(parsing: "cam9/left"))))
        #expect(kept(reset) == [false] && sent(reset)["cam9/left"] == false)
    }

    /// A run stopped (or reset) while no live worker hosts it is ended by the coordinator, with
    /// its counts as last reported: no run stays open for ever. One a live worker hosts is ended
    /// by that worker.
    @Test func aRunStoppedWhileItsWorkerIsGoneIsEndedByTheCoordinator() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        _ = harness.send(try Self.request("r2", .start(Self.plan("cam0/right", side: .right))))
        harness.actions = []
        harness.core.receive(
            WorkerReport(
                worker: "w1", pool: "default", capacity: 8,
                sessions: [
                    .init(key: try SessionKey(parsing: "cam0/left"), run: 1, repCount: 4, rejectedCount: 1),
                    .init(key: try SessionKey(parsing: "cam0/right"), run: 2, repCount: 2, rejectedCount: 0),
                ]), from: Array("w1".utf8), now: .zero, into: &harness.actions)
        func ends(_ actions: [Action]) -> [RunRecord.RunEnd] {
            actions.compactMap { if case .announceRunEnd(let end) = $0 { end } else { nil } }
        }
        // Hosted by a live worker: the worker ends it.
        let hosted = harness.send(try Self.request("r3", .stop(SessionKey(parsing: "cam0/right"))))
        #expect(ends(hosted).isEmpty)
        // w1 goes silent for its lease: cam0/left waits for a worker; then it is stopped.
        _ = harness.tick(to: .seconds(4))
        #expect(harness.core.liveWorkers.isEmpty)
        harness.now = .seconds(4)
        let stopped = harness.send(try Self.request("r4", .stop(SessionKey(parsing: "cam0/left"))))
        #expect(Self.answers(stopped).first?.outcome == .stopped)
        let end = try #require(ends(stopped).first, "\(stopped)")
        #expect(end.run == 1 && end.reason == .stopped && end.repCount == 4 && end.rejectedCount == 1)
        #expect(end.reps == nil)
    }

    @Test func anUnconfirmedCommandIsAnsweredAfterItsWaitAndItsDecisionStands() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        #expect(harness.core.nextDeadline == .seconds(2))
        #expect(Self.answers(harness.tick(to: .milliseconds(1999))).isEmpty)
        let answer = try #require(Self.answers(harness.tick(to: .seconds(2))).first)
        #expect(answer.outcome == .notConfirmed && answer.worker == "w1" && answer.run == 1)
        #expect(harness.core.plans.count == 1)
    }

    @Test func placementPrefersTheCamerasWorkerThenTheMostRoomAndHonoursPoolsNamesAndCapacity() throws {
        var harness = Harness()
        _ = try harness.report("w1", capacity: 2)
        _ = try harness.report("w2", capacity: 3)
        _ = try harness.report("x1", pool: "gait", capacity: 8)
        func start(_ id: String, _ plan: SessionPlan) -> ControlAnswer? {
            let actions = harness.send(try! Self.request(id, .start(plan)))
            return Self.answers(actions).first
                ?? Self.assignments(actions).keys.first.map {
                    ControlAnswer(id: id, outcome: .started, message: "", worker: $0)
                }
        }
        #expect(start("a", try Self.plan("cam0/left"))?.worker == "w2")  // most room
        #expect(start("b", try Self.plan("cam0/right", side: .right))?.worker == "w2")  // same camera
        #expect(start("c", try Self.plan("cam1/left"))?.worker == "w1")  // 2 free against 1
        #expect(start("d", try Self.plan("cam2/left", pool: "gait"))?.worker == "x1")
        #expect(start("e", try Self.plan("cam3/left", worker: "w1"))?.worker == "w1")
        let full = try #require(start("f", try Self.plan("cam4/left", worker: "w1")))
        #expect(full.outcome == .noLiveWorker && full.message == "worker w1 has no room (2 sessions)")
        #expect(
            start("g", try Self.plan("cam5/left", worker: "x1"))?.message
                == "worker x1 is in pool gait, not default")
        #expect(start("h", try Self.plan("cam6/left", worker: "zz"))?.message == "worker zz is not live")
        #expect(
            start("i", try Self.plan("cam7/left", pool: "none"))?.message == "no live worker in pool none")
    }

    @Test func aSilentWorkersSessionsGoToAnotherLiveWorkerOfThePool() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left", worker: nil))))
        _ = try harness.report("w1", [("cam0/left", 1)])
        harness.now = .seconds(1)
        _ = try harness.report("w2")
        #expect(harness.core.nextDeadline == .seconds(3))
        #expect(harness.tick(to: .milliseconds(2999)).isEmpty)
        // w2 keeps reporting; w1 has been silent for the lease.
        harness.now = .milliseconds(2999)
        _ = try harness.report("w2")
        let moved = harness.tick(to: .seconds(3))
        #expect(Self.assignments(moved) == ["w2": ["cam0/left@1"]])
        #expect(harness.core.liveWorkers == ["w2"])
        #expect(harness.core.statuses.first?.worker == "w2")

        // w1 comes back (it was paused) still running the session: it is told to give it up,
        // not that a stop ended its run (the run goes on on w2).
        harness.now = .seconds(4)
        let back = try harness.report("w1", [("cam0/left", 1)])
        let told = back.compactMap { if case .assign(let a, "w1", _) = $0 { a } else { nil } }.first
        #expect(told?.sessions == [] && told?.stopped == [:], "\(back)")

        // A stop ends the run where it runs, and says so until that worker no longer shows it.
        let key = try SessionKey(parsing: "cam0/left")
        let stop = harness.send(try Self.request("r2", .stop(key)))
        let stopped = stop.compactMap { if case .assign(let a, "w2", _) = $0 { a } else { nil } }.first
        #expect(stopped?.sessions == [] && stopped?.stopped == [key: 1], "\(stop)")
        harness.now = .seconds(6)
        let again = try harness.report("w2", [("cam0/left", 1)])
        let resent = again.compactMap { if case .assign(let a, "w2", _) = $0 { a } else { nil } }.first
        #expect(resent?.stopped == [key: 1], "sent again while w2 still runs it: \(again)")
        _ = try harness.report("w2")
        _ = harness.send(try Self.request("r3", .start(Self.plan("cam1/left", worker: "w2"))))
        let next = harness.actions.compactMap { if case .assign(let a, "w2", _) = $0 { a } else { nil } }
            .first
        #expect(next?.stopped == [:], "forgotten once w2 no longer runs it: \(harness.actions)")
    }

    @Test func aRestartedCoordinatorLearnsPlacementsFromHeartbeatsAndPlacesTheRestAfterItsGrace() throws {
        var left = try Self.plan("cam0/left")
        left.run = 4
        var right = try Self.plan("cam0/right", side: .right)
        right.run = 7
        var harness = Harness(plans: [left, right], configuration: .init(startGrace: .seconds(3)))
        // Before the grace is over, a worker that reports nothing gets nothing.
        let early = try harness.report("w1", [("cam0/left", 4)])
        #expect(Self.assignments(early) == ["w1": ["cam0/left@4"]])
        #expect(harness.core.statuses.map(\.state) == [.running, .waiting])
        // The grace is over: the session no worker reports is placed (on the camera's worker).
        harness.now = .seconds(3)
        let placed = try harness.report("w1", [("cam0/left", 4)])
        #expect(Self.assignments(placed) == ["w1": ["cam0/left@4", "cam0/right@7"]])
        // A new run never reuses a number kept.
        _ = harness.send(try Self.request("r1", .reset(SessionKey(parsing: "cam0/left"))))
        #expect(harness.core.plans[try SessionKey(parsing: "cam0/left")]?.run == 8)
    }

    @Test func anAssignmentIsSentAgainToAWorkerThatDoesNotShowItAtMostOnceASecond() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        harness.now = .milliseconds(500)
        #expect(Self.assignments(try harness.report("w1")).isEmpty)
        harness.now = .seconds(1)
        #expect(Self.assignments(try harness.report("w1")) == ["w1": ["cam0/left@1"]])
        // A worker restarted (a new connection) is sent its sessions at once.
        harness.now = .milliseconds(1100)
        harness.actions = []
        harness.core.receive(
            WorkerReport(worker: "w1", pool: "default", capacity: 8, sessions: []), from: [42],
            now: harness.now,
            into: &harness.actions)
        #expect(Self.assignments(harness.actions) == ["w1": ["cam0/left@1"]])
    }

    @Test func theListNamesEverySessionWithItsWorkerRunAndState() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam1/left", patient: "p-2"))))
        _ = harness.send(try Self.request("r2", .start(Self.plan("cam0/left"))))
        _ = try harness.report("w1", [("cam1/left", 1)])
        let answer = try #require(Self.answers(harness.send(try Self.request("r3", .list))).first)
        #expect(answer.outcome == .listed)
        #expect(
            answer.sessions.map { "\($0.plan.key) \($0.plan.run) \($0.worker ?? "-") \($0.state)" } == [
                "cam0/left 2 w1 assigned", "cam1/left 1 w1 running",
            ])
    }

    @Test func answersKeptForRetriesAreBoundedAndOnlyThoseThatChangedASession() throws {
        var harness = Harness(configuration: .init(startGrace: .zero, rememberedAnswers: 2))
        _ = try harness.report("w1")
        var running: [(String, UInt64)] = []
        for (id, camera) in [("a", "cam0"), ("b", "cam1"), ("c", "cam2")] {
            _ = harness.send(try Self.request(id, .start(Self.plan("\(camera)/left"))))
            running.append(("\(camera)/left", UInt64(running.count + 1)))
            #expect(Self.answers(try harness.report("w1", running)).first?.outcome == .started)
        }
        // "a" was forgotten: it is a new request, and starts (another camera than its first time).
        let again = harness.send(try Self.request("a", .start(Self.plan("cam3/left"))))
        #expect(Self.assignments(again)["w1"]?.contains("cam3/left@4") == true, "\(again)")
        // "c" is remembered: its start's answer again, nothing started.
        let kept = harness.send(try Self.request("c", .start(Self.plan("cam9/left"))))
        #expect(Self.answers(kept).first?.run == 3 && Self.assignments(kept).isEmpty, "\(kept)")
        // A refusal is decided again when asked again: no live worker of the pool, then one.
        let refused = harness.send(try Self.request("g", .start(Self.plan("cam5/left", pool: "gait"))))
        #expect(Self.answers(refused).first?.outcome == .noLiveWorker)
        _ = try harness.report("x1", pool: "gait")
        let retried = harness.send(try Self.request("g", .start(Self.plan("cam5/left", pool: "gait"))))
        #expect(Self.assignments(retried) == ["x1": ["cam5/left@5"]], "\(retried)")
        // A list is never kept: asked again, it is the list now.
        #expect(Self.answers(harness.send(try Self.request("l", .list))).first?.sessions.count == 5)
        _ = harness.send(try Self.request("s", .stop(SessionKey(parsing: "cam0/left"))))
        #expect(Self.answers(harness.send(try Self.request("l", .list))).first?.sessions.count == 4)
    }

    /// The list shows a running session's counts as its worker last reported them; a session
    /// not running yet shows none.
    @Test func theListShowsTheCountsTheWorkerReports() throws {
        var harness = Harness()
        _ = try harness.report("w1")
        _ = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        #expect(harness.core.statuses.first?.repCount == nil)
        harness.actions = []
        harness.core.receive(
            WorkerReport(
                worker: "w1", pool: "default", capacity: 8,
                sessions: [
                    .init(key: try SessionKey(parsing: "cam0/left"), run: 1, repCount: 4, rejectedCount: 2)
                ]),
            from: Array("w1".utf8), now: harness.now, into: &harness.actions)
        let status = try #require(harness.core.statuses.first)
        #expect(status.state == .running && status.repCount == 4 && status.rejectedCount == 2)
    }

    /// A session waiting for a worker after the grace sets no deadline: the coordinator waits
    /// for a report or a lease, not for the clock (a deadline in the past made its loop spin).
    @Test func aSessionWaitingAfterTheGraceSetsNoDeadline() throws {
        var left = try Self.plan("cam0/left")
        left.run = 1
        var harness = Harness(plans: [left], configuration: .init(startGrace: .seconds(3)))
        #expect(harness.core.nextDeadline == .seconds(3))
        _ = harness.tick(to: .seconds(3))
        #expect(harness.core.nextDeadline == nil)
        #expect(harness.core.statuses.first?.state == .waiting)
        // A worker that reports places it.
        harness.now = .seconds(10)
        #expect(Self.assignments(try harness.report("w1")) == ["w1": ["cam0/left@1"]])
    }

    /// A worker that applied a higher epoch than the coordinator knows (its counters lost) is
    /// sent assignments above it, not ones it would drop as stale.
    @Test func anEpochLostByTheCoordinatorGoesOnAboveTheWorkers() throws {
        var harness = Harness()
        harness.actions = []
        harness.core.receive(
            WorkerReport(worker: "w1", pool: "default", capacity: 8, sessions: [], epoch: 40),
            from: Array("w1".utf8), now: harness.now, into: &harness.actions)
        let actions = harness.send(try Self.request("r1", .start(Self.plan("cam0/left"))))
        let epochs = actions.compactMap { action -> UInt64? in
            if case .assign(let assignment, _, _) = action { assignment.epoch } else { nil }
        }
        #expect(!epochs.isEmpty && epochs.allSatisfy { $0 > 40 }, "\(epochs)")
    }
}

/// What each peer of the control socket may send, from its ZAP user id.
struct ControlPeerTests {
    @Test func onlyControlKeysCommandAndOnlyWorkerKeysReport() {
        let control = ControlPeer(userID: "control/reception", overTCP: true)
        #expect(control.mayCommand && !control.mayReport)
        let worker = ControlPeer(userID: "worker/ward-3", overTCP: true)
        #expect(!worker.mayCommand && worker.mayReport)
        for other in ["consumer/tablet", "ingest/cam0", "broker/broker", "controller/x", "nothing"] {
            let peer = ControlPeer(userID: other, overTCP: true)
            #expect(!peer.mayCommand && !peer.mayReport, "\(other)")
        }
        for trusted in ["local/1000", "insecure"] {
            #expect(ControlPeer(userID: trusted, overTCP: true) == .trusted)
        }
        // No user id: the user's own bus directory, or a TCP message ZAP never saw.
        #expect(ControlPeer(userID: nil, overTCP: false) == .trusted)
        #expect(ControlPeer(userID: nil, overTCP: true) == .unknown)
        #expect(
            ControlPeer(userID: "consumer/tablet", overTCP: true).description == "the key consumer/tablet")
    }
}
