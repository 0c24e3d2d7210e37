import KinesiaControl
import KinesiaMotion
import Testing

/// Where a run goes on, for a worker of another box: in a worker's report, kept by the
/// coordinator, given with the session to the next worker; and what does not read.
struct RunResumeTests {
    static let resume = RunResume(
        stream: 0x0123_4567_89ab_cdef,
        segments: [
            RunResume.Segment(stream: 0xa, first: 3, last: 41, skipped: [5..<9, 20..<21]),
            RunResume.Segment(stream: 0xb, first: 0),
        ])

    @Test func aReportAndAnAssignmentCarryAResumeAndReadItBackExactly() throws {
        let key = try SessionKey(parsing: "cam0/left")
        let report = ControlMessage.workerReport(
            WorkerReport(
                worker: "w1", pool: "default", capacity: 4,
                sessions: [WorkerReport.Running(key: key, run: 3, resume: Self.resume)], epoch: 2, number: 5))
        let text = String(decoding: report.encoded(), as: UTF8.self)
        #expect(
            text.contains(
                #""resume":{"stream":"0123456789abcdef","segments":[{"stream":"000000000000000a","first":"3","last":"41","skipped":[["5","9"],["20","21"]]},{"stream":"000000000000000b","first":"0"}]}"#
            ), "\(text)")
        #expect(try ControlMessage(decoding: report.encoded()) == report)

        let plan = try CoordinatorCoreTests.plan("cam0/left")
        let assignment = ControlMessage.assignment(
            WorkerAssignment(
                epoch: 7, sessions: [plan], resumes: [key: .init(run: 3, resume: Self.resume)]))
        #expect(try ControlMessage(decoding: assignment.encoded()) == assignment)
        guard case .assignment(let read) = try ControlMessage(decoding: assignment.encoded()) else {
            Issue.record("not an assignment")
            return
        }
        // Given for run 3 only: a plan at another run has none.
        var atRun3 = plan
        atRun3.run = 3
        #expect(read.resume(of: atRun3) == Self.resume)
        #expect(read.resume(of: plan) == nil)
    }

    @Test(arguments: [
        // Not 16 hex digits, zero, a reversed segment, holes out of order or empty, numbers not strings.
        #"{"stream":"123","segments":[]}"#,
        #"{"stream":"0000000000000000","segments":[]}"#,
        #"{"stream":"0123456789abcdef","segments":[{"stream":"000000000000000a","first":"9","last":"3"}]}"#,
        #"{"stream":"0123456789abcdef","segments":[{"stream":"000000000000000a","first":"0","skipped":[["9","12"],["5","6"]]}]}"#,
        #"{"stream":"0123456789abcdef","segments":[{"stream":"000000000000000a","first":"0","skipped":[["5","5"]]}]}"#,
        #"{"stream":"0123456789abcdef","segments":[{"stream":"000000000000000a","first":0}]}"#,
        #"{"stream":"0123456789abcdef","segments":[{"stream":"000000000000000a","first":"0","epoch":"1"}]}"#,
        #"{"stream":"0123456789abcdef","segments":[],"run":"1"}"#,
    ])
    func aResumeThatDoesNotReadRefusesItsReport(_ resume: String) {
        let text =
            #"{"type":"workerReport","worker":"w1","pool":"default","capacity":4,"epoch":"0","sessions":[{"session":"cam0/left","run":"1","resume":"#
            + resume + "}]}"
        #expect(throws: ControlError.self) { try ControlMessage(decoding: Array(text.utf8)) }
    }

    @Test func moreHolesThanAReportCarriesAreRefused() {
        let holes = (0...RunResume.maximumSkipped).map { #"["\#($0 * 2)","\#($0 * 2 + 1)"]"# }
        let text =
            #"{"type":"workerReport","worker":"w1","pool":"default","capacity":4,"epoch":"0","sessions":[{"session":"cam0/left","run":"1","resume":{"stream":"0123456789abcdef","segments":[{"stream":"000000000000000a","first":"0","skipped":["#
            + holes.joined(separator: ",") + "]}]}}]}"
        #expect(throws: ControlError.self) { try ControlMessage(decoding: Array(text.utf8)) }
    }

    @Test func aResumeCoversAnotherWhenItKnowsAtLeastAsMuch() {
        var more = Self.resume
        more.segments[1].skipped = [7..<8]
        more.segments.append(RunResume.Segment(stream: 0xc, first: 2))
        #expect(more.covers(Self.resume))
        #expect(!Self.resume.covers(more))
        #expect(Self.resume.covers(Self.resume))
        var otherStream = more
        otherStream.stream = 0x99
        #expect(!otherStream.covers(Self.resume))
        var laterFirst = more
        laterFirst.segments[0].first = 4
        #expect(!laterFirst.covers(Self.resume))
        var lostHole = more
        lostHole.segments[0].skipped = [5..<9]
        #expect(!lostHole.covers(Self.resume))
    }

    /// `cam0/left` started on `w1`, which reports `resumes` one after the other; `w2` joins,
    /// `w1` goes silent past its lease: what the coordinator gives `w2`.
    static func takeover(after resumes: [RunResume?]) throws -> (WorkerAssignment, SessionPlan) {
        var harness = CoordinatorCoreTests.Harness()
        _ = try harness.report("w1")
        _ = harness.send(
            try CoordinatorCoreTests.request("r1", .start(CoordinatorCoreTests.plan("cam0/left"))))
        let key = try SessionKey(parsing: "cam0/left")
        for resume in resumes {
            var actions: [CoordinatorCore.Action] = []
            harness.core.receive(
                WorkerReport(
                    worker: "w1", pool: "default", capacity: 8,
                    sessions: [WorkerReport.Running(key: key, run: 1, resume: resume)]),
                from: Array("w1".utf8), now: harness.now, into: &actions)
        }
        _ = try harness.report("w2")
        harness.now = .seconds(2)
        _ = try harness.report("w2")
        let actions = harness.tick(to: .seconds(4))
        let given = actions.compactMap { action -> WorkerAssignment? in
            if case .assign(let assignment, "w2", _) = action { assignment } else { nil }
        }
        let assignment = try #require(given.last, "\(actions)")
        return (assignment, try #require(assignment.sessions.first { $0.key == key }))
    }

    @Test func theCoordinatorGivesTheLatestResumeOfARunToTheWorkerItMovesTheSessionTo() throws {
        let (assignment, plan) = try Self.takeover(after: [
            RunResume(stream: 0x77, segments: []), Self.resume,
        ])
        #expect(plan.run == 1)
        #expect(assignment.resume(of: plan) == Self.resume)
        // A report at the run without a resume (too many holes to tell) leaves none to give.
        let (without, _) = try Self.takeover(after: [Self.resume, nil])
        #expect(without.resumes.isEmpty)
    }

    /// A report of a session another worker holds (a worker back after its sessions were taken
    /// over, a report that lagged behind an assignment, a forged one) is refused and counted:
    /// its counts and resume are not taken, and the worker is told its assignment again.
    @Test func aReportOfASessionAnotherWorkerHoldsIsRefusedAndItsResumeNotTaken() throws {
        var harness = CoordinatorCoreTests.Harness()
        _ = try harness.report("w1")
        _ = harness.send(
            try CoordinatorCoreTests.request("r1", .start(CoordinatorCoreTests.plan("cam0/left"))))
        let key = try SessionKey(parsing: "cam0/left")
        _ = try harness.report("w1", [("cam0/left", 1)])
        _ = try harness.report("w2")
        harness.now = .seconds(2)
        _ = try harness.report("w2")
        _ = harness.tick(to: .seconds(4))
        _ = try harness.report("w2", [("cam0/left", 1)])
        // w1 comes back and tells of the session it no longer holds, at its old epoch.
        var stale: [CoordinatorCore.Action] = []
        harness.core.receive(
            WorkerReport(
                worker: "w1", pool: "default", capacity: 8,
                sessions: [
                    WorkerReport.Running(
                        key: key, run: 1, repCount: 99, rejectedCount: 9, resume: Self.resume)
                ], epoch: 1),
            from: Array("w1".utf8), now: .seconds(4), into: &stale)
        #expect(
            stale.contains {
                if case .refuse("refused.claim", let reason) = $0 {
                    reason.contains("worker w1 (epoch 1) reports cam0/left (run 1), which worker w2 holds")
                } else {
                    false
                }
            }, "\(stale)")
        let status = try #require(harness.core.statuses.first { $0.plan.key == key })
        #expect(status.worker == "w2" && status.repCount != 99, "\(status)")
        // w1 is told its assignment again: without the session, which stops it there.
        let told = stale.compactMap { action -> WorkerAssignment? in
            if case .assign(let assignment, "w1", _) = action { assignment } else { nil }
        }
        #expect(told.allSatisfy { $0.sessions.isEmpty && $0.resumes.isEmpty })
    }
}
