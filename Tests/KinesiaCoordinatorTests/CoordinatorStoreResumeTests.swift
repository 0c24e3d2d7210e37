import Foundation
import KinesiaControl
import KinesiaStore
import KinesiaTestSupport
import Testing

@testable import KinesiaCoordinator

/// The coordinator keeps each run's latest resume in its database: a coordinator restarted
/// still gives it to the worker that takes a session over.
struct CoordinatorStoreResumeTests {
    static let key = try! SessionKey(parsing: "cam0/left")
    static let given = WorkerAssignment.GivenResume(
        run: 3,
        resume: RunResume(
            stream: 0xfeed_0000_0000_0001,
            segments: [
                RunResume.Segment(stream: 0xa, first: 0, last: 99, skipped: [5..<9]),
                .init(stream: 0xb, first: 0),
            ]
        ))

    @Test func aResumeKeptReadsBackExactlyAndGoesWithItsPlan() throws {
        let scratch = try ScratchDirectory("coordinator-resumes")
        let path = scratch.path("coordinator.db")
        do {
            let store = try CoordinatorStore(path: path)
            defer { store.close() }
            let other = try SessionKey(parsing: "cam1/left")
            try store.transaction { () throws(SQLiteError) in
                try store.save(Self.given, of: Self.key)
                try store.save(
                    WorkerAssignment.GivenResume(run: 1, resume: RunResume(stream: 7, segments: [])),
                    of: other)
            }
        }
        let reopened = try CoordinatorStore(path: path)
        defer { reopened.close() }
        let kept = try reopened.load()
        #expect(kept.resumes[Self.key] == Self.given)
        #expect(kept.resumes.count == 2 && kept.unreadable.isEmpty)
        try reopened.remove(try SessionKey(parsing: "cam1/left"))
        try reopened.save(nil, of: Self.key)
        #expect(try reopened.load().resumes.isEmpty)
    }

    @Test func aResumeThatDoesNotReadBackIsPassedOverAndSaid() throws {
        let scratch = try ScratchDirectory("coordinator-resumes-torn")
        let path = scratch.path("coordinator.db")
        do {
            let store = try CoordinatorStore(path: path)
            defer { store.close() }
            try store.save(Self.given, of: Self.key)
        }
        // Another program's row: not a resume.
        let raw = try SQLiteDatabase(path: path)
        try raw.execute(#"UPDATE resumes SET resume = '{"run":"3","stream":"nothex"}'"#)
        raw.close()
        let kept = try CoordinatorStore(path: path).load()
        #expect(kept.resumes.isEmpty)
        #expect(kept.unreadable == ["the resume of cam0/left's run does not read back: passed over"])
    }

    /// What the core asks the shell to keep, and a core made from what was kept.
    @Test func theCoreKeepsAChangedResumeAndARestartedCoreGivesIt() throws {
        var plan = try Self.plan()
        plan.run = 3
        var core = CoordinatorCore(plans: [plan], nextRun: 4, epoch: 1, now: .zero)
        var actions: [CoordinatorCore.Action] = []
        let report = WorkerReport(
            worker: "w1", pool: "default", capacity: 8,
            sessions: [WorkerReport.Running(key: Self.key, run: 3, resume: Self.given.resume)])
        core.receive(report, from: Array("w1".utf8), now: .seconds(1), into: &actions)
        #expect(actions.contains(.saveResume(Self.key, Self.given)))
        actions = []
        core.receive(report, from: Array("w1".utf8), now: .seconds(2), into: &actions)
        #expect(
            !actions.contains { if case .saveResume = $0 { true } else { false } },
            "unchanged: not kept again")

        // Restarted with what was kept: w1 is gone, w2 reports; after the grace the session
        // goes to w2 with the resume.
        var restarted = CoordinatorCore(
            plans: [plan], nextRun: 4, epoch: 5, now: .zero, resumes: [Self.key: Self.given])
        actions = []
        restarted.receive(
            WorkerReport(worker: "w2", pool: "default", capacity: 8, sessions: []), from: Array("w2".utf8),
            now: .seconds(1), into: &actions)
        actions = []
        restarted.tick(now: .seconds(4), into: &actions)
        restarted.receive(
            WorkerReport(worker: "w2", pool: "default", capacity: 8, sessions: []), from: Array("w2".utf8),
            now: .seconds(4), into: &actions)
        let assignment = try #require(
            actions.compactMap { action -> WorkerAssignment? in
                if case .assign(let assignment, "w2", _) = action { assignment } else { nil }
            }.last, "\(actions)")
        #expect(assignment.resume(of: plan) == Self.given.resume)
    }

    static func plan() throws -> SessionPlan {
        try SessionPlan(
            key: Self.key, exerciseFile: SessionPlan.catalogExercise("squat"), analysis: .left)
    }
}
