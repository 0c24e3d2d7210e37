import Foundation
import KinesiaCLI
import KinesiaControl
import KinesiaMotion
import KinesiaWire
import Testing

struct WatchStateTests {
    let left = WatchState.SessionID(camera: "cam0", session: "left")

    @Test func aSnapshotCreatesTheSessionWithItsCounts() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        let update = state.apply(fixtures.snapshot(WatchFixtures.midSet, at: 12.5), at: 1)
        #expect(update == .snapshot(left))
        let session = try! #require(state.sessions[left])
        #expect(session.snapshot?.value == 87.4)
        #expect(session.cleanReps == 3)
        #expect(session.rejectedReps == 1)
        #expect(session.best == 142.25)
        #expect(session.time == 12.5)
        #expect(session.snapshotCount == 1)
    }

    @Test func eventsRecordTheLastEventTheLastFaultAndEveryJudgedRep() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        let clean = Rep(peak: 150, faults: [], start: 1, end: 3)
        let rejected = Rep(peak: 120, faults: [.keepElbowStraight], start: 4, end: 6)
        state.apply(fixtures.event(.repCompleted(clean), at: 3), at: 1)
        state.apply(fixtures.event(.formFault(.keepElbowStraight), at: 5), at: 2)
        let update = state.apply(fixtures.event(.repRejected(rejected), at: 6), at: 3)
        #expect(update == .event(left, t: 6, .repRejected(rejected)))
        let session = try! #require(state.sessions[left])
        #expect(session.reps == [clean, rejected])
        #expect(session.lastEvent == WatchState.TimedEvent(t: 6, event: .repRejected(rejected)))
        #expect(session.lastFault == WatchState.TimedFault(t: 5, fault: .keepElbowStraight))
        #expect(session.eventCount == 3)
        #expect(session.eventCounts == ["repCompleted": 1, "formFault": 1, "repRejected": 1])
        // Without a snapshot the counts come from the reps received.
        #expect(session.cleanReps == 1)
        #expect(session.rejectedReps == 1)
        #expect(session.best == 150)
        #expect(session.lastHeard == 3)
    }

    @Test func theSnapshotsCountsWinOverTheRepsAWatcherThatJoinedLateReceived() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        state.apply(fixtures.event(.repCompleted(Rep(peak: 150, faults: [], start: 1, end: 3)), at: 3), at: 1)
        state.apply(fixtures.snapshot(WatchFixtures.midSet, at: 3.1), at: 1.1)
        #expect(state.sessions[left]?.cleanReps == 3)
        #expect(state.sessions[left]?.best == 142.25)
    }

    @Test func camerasCam1AndCam10AreSeparateSessionsListedInOrder() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        state.apply(fixtures.snapshot(WatchFixtures.midSet, at: 1, camera: "cam10", session: "left"), at: 0)
        state.apply(fixtures.snapshot(MotionSnapshot(), at: 1, camera: "cam1", session: "right"), at: 0)
        state.apply(fixtures.snapshot(MotionSnapshot(), at: 1, camera: "cam1", session: "left"), at: 0)
        #expect(state.orderedSessions.map(\.id.description) == ["cam1/left", "cam1/right", "cam10/left"])
        #expect(state.sessions[.init(camera: "cam1", session: "left")]?.cleanReps == 0)
        #expect(state.sessions[.init(camera: "cam10", session: "left")]?.cleanReps == 3)
    }

    @Test func healthReportsAreKeptPerProcessAndGoStaleAfterThreeSilentSeconds() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        state.apply(
            fixtures.health("worker-left", role: "worker", uptime: 5, counters: ["poses": 10]), at: 10)
        state.apply(fixtures.health("broker", role: "broker", uptime: 6), at: 10)
        state.apply(
            fixtures.health("worker-left", role: "worker", uptime: 6, counters: ["poses": 40]), at: 11)
        #expect(state.orderedProcesses.map(\.report.process) == ["broker", "worker-left"])
        let worker = try! #require(state.processes["worker-left"])
        #expect(worker.report.counters["poses"] == 40)
        #expect(!worker.isStale(at: 14))
        #expect(worker.isStale(at: 14.5))
        #expect(worker.uptime(at: 12.5) == 7.5)
    }

    @Test func posesAreCountedButNotShown() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        #expect(state.apply(fixtures.pose(), at: 0) == .ignored)
        #expect(state.messageCount == 1)
        #expect(state.sessions.isEmpty)
    }

    @Test func undecodableMessagesAreCountedWithTheirReasonAndChangeNothingElse() throws {
        var fixtures = WatchFixtures()
        var state = WatchState()
        state.apply(fixtures.snapshot(WatchFixtures.midSet, at: 1), at: 0)
        let before = state.sessions

        let garbage = state.apply(frames: [Array("event/cam0/left/".utf8), [1, 2, 3]], at: 1)
        let oneFrame = state.apply(frames: [Array("event/cam0/left/".utf8)], at: 2)
        let badEvent = try WireMessage(
            topic: Topic.event(camera: "cam0", session: "left"),
            header: WireHeader(kind: .event, streamID: StreamID(9), sequence: 0, sentAt: 0),
            body: .event(json: #"{"type":"repCompleted","t":1}"#))
        let missingRep = state.apply(badEvent, at: 3)

        for update in [garbage, oneFrame, missingRep] {
            guard case .invalid = update else {
                Issue.record("expected .invalid, got \(update)")
                continue
            }
        }
        #expect(state.invalidMessages == 3)
        #expect(state.messageCount == 4)
        #expect(state.lastInvalidReason?.contains("cam0/left") == true)
        #expect(state.sessions == before)
    }

    @Test func encodedFramesDecodeToTheSameUpdateAsTheMessage() throws {
        var fixtures = WatchFixtures()
        var state = WatchState()
        let message = fixtures.event(.holdStarted, at: 4)
        let frames = try message.encode()
        #expect(
            state.apply(frames: [frames.topic, frames.payload], at: 0) == .event(left, t: 4, .holdStarted))
    }

    @Test func aDuplicateIsFoldedOnceAndAGapIsCountedAsMissed() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        let rep = Rep(peak: 150, faults: [], start: 1, end: 3)
        let first = fixtures.event(.repCompleted(rep), at: 3, sequence: 0)
        state.apply(first, at: 0)
        #expect(state.apply(first, at: 1) == .ignored)
        #expect(state.sessions[left]?.reps.count == 1)
        state.apply(fixtures.event(.holdStarted, at: 9, sequence: 4), at: 2)
        #expect(state.missedMessages == 3)
    }

    /// A session's runs: the run under way is shown with its patient; a new run starts the
    /// session's view over (its events and snapshots are a new stream); an end is kept;
    /// a record that does not read is counted invalid.
    @Test func runRecordsShowTheRunAndANewRunStartsTheSessionOver() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        let started =
            #"{"type":"runStarted","run":"3","camera":"cam0","session":"left","exercise":"squat","side":"left","patient":"p-17","thresholds":{"start":30,"end":20,"minPeak":60},"exerciseFile":"{\"exercise\":\"squat\"}"}"#
        let update = state.apply(fixtures.run(started), at: 1)
        guard case .run(let id, let record) = update else {
            Issue.record("\(update)")
            return
        }
        #expect(id == left && record.run == 3)
        state.apply(fixtures.snapshot(WatchFixtures.midSet, at: 12.5), at: 2)
        #expect(state.sessions[left]?.cleanReps == 3)
        let lines = WatchRenderer.sessionLines(state.sessions[left]!, now: 2, width: 80)
        #expect(lines.first?.hasPrefix("cam0/left  run 3, patient p-17") == true, "\(lines)")
        let ended =
            #"{"type":"runEnded","run":"3","camera":"cam0","session":"left","reason":"reset","repCount":3,"rejectedCount":1,"best":142.25}"#
        state.apply(fixtures.run(ended), at: 3)
        #expect(state.sessions[left]?.cleanReps == 3)
        #expect(
            state.sessions[left].map { WatchRenderer.sessionLines($0, now: 3, width: 80) }?.first?.contains(
                "run 3 ended (reset)") == true)
        let next = started.replacingOccurrences(of: #""run":"3""#, with: #""run":"4""#)
        state.apply(fixtures.run(next), at: 4)
        #expect(state.sessions[left]?.snapshot == nil && state.sessions[left]?.cleanReps == 0)
        #expect(state.apply(fixtures.run(#"{"type":"runPaused"}"#), at: 5) != .ignored)
        #expect(state.invalidMessages == 1)
    }
}
