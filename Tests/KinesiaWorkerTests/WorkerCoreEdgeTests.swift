import KinesiaMotion
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// A worker's counters stay total for any sequence numbers its peers send (issue 19, item 1:
/// every sequence-number and counter computation on bus data must be total).
struct WorkerCoreEdgeTests {
    /// Two cameras whose poses each jump from 0 to 2^64-1: each camera's feed gives up almost
    /// 2^64 poses as lost, and the worker's sum of them saturated instead of trapping (it
    /// added them with `+`: two such cameras killed the worker at its next health report).
    @Test func losingAlmostEverySequenceNumberOnTwoCamerasKeepsTheHealthReportReadable() throws {
        let sessions = [
            WorkerSession(camera: "cam0", name: "left", exercise: .squat, side: .left),
            WorkerSession(camera: "cam1", name: "left", exercise: .squat, side: .left),
        ]
        var core = try WorkerCore(sessions: sessions, snapshotRate: 15, resume: [:], holeWait: .zero)
        var actions: [WorkerCore.Action] = []
        core.start(now: .zero, into: &actions)
        for camera in ["cam0", "cam1"] {
            let topic = try Topic.pose(camera: camera)
            for (sequence, time) in [(UInt64(0), 0.0), (UInt64.max, 0.1)] {
                let header = WireHeader(kind: .pose, streamID: StreamID(7), sequence: sequence, sentAt: 0)
                core.receiveLive(
                    FlatPose(timestamp: time), on: topic, header: header, now: .seconds(time), into: &actions)
            }
            core.tick(now: .seconds(1), into: &actions)
        }
        let counters = core.healthCounters(sequence: SequenceTotals())
        #expect(counters["posesLost"] == Int.max, "\(counters)")
        #expect(counters["gaps"] == Int.max)
    }

    /// The worker's deadline is the earliest end of a hole wait among its cameras, and a tick
    /// gives up only the holes whose wait is over.
    @Test func theDeadlineIsTheEarliestHoleWaitAndATickGivesUpOnlyTheHolesDue() throws {
        let sessions = [
            WorkerSession(camera: "cam0", name: "left", exercise: .squat, side: .left),
            WorkerSession(camera: "cam1", name: "left", exercise: .squat, side: .left),
        ]
        var core = try WorkerCore(
            sessions: sessions, snapshotRate: 15, resume: [:], holeWait: .milliseconds(500))
        var actions: [WorkerCore.Action] = []
        core.start(now: .zero, into: &actions)
        func live(_ camera: String, _ sequence: UInt64, at now: Duration) throws {
            let header = WireHeader(kind: .pose, streamID: StreamID(7), sequence: sequence, sentAt: 0)
            core.receiveLive(
                FlatPose(timestamp: Double(sequence) / 30), on: try Topic.pose(camera: camera),
                header: header,
                now: now, into: &actions)
        }
        func given(_ actions: [WorkerCore.Action]) -> [String] {
            actions.compactMap { if case .recordSkip(let camera, _, _) = $0 { camera } else { nil } }
        }
        #expect(core.deadline == nil)
        try live("cam0", 0, at: .zero)
        try live("cam1", 0, at: .zero)
        try live("cam1", 3, at: .milliseconds(100))  // cam1: a hole from 1, due at 600 ms
        try live("cam0", 5, at: .milliseconds(200))  // cam0: a hole from 1, due at 700 ms
        #expect(core.deadline == .milliseconds(600))
        core.tick(now: .milliseconds(599), into: &actions)
        #expect(given(actions).isEmpty)
        core.tick(now: .milliseconds(600), into: &actions)
        #expect(given(actions) == ["cam1"])
        #expect(core.deadline == .milliseconds(700))
        core.tick(now: .milliseconds(700), into: &actions)
        #expect(given(actions) == ["cam0"])
        #expect(core.deadline == nil)
    }

    /// A tail asked for and not sent within the hole wait is given up with nothing to do (no
    /// action): the worker's deadline goes with it, so its loop does not wake at once for ever.
    @Test func aTailGivenUpWithNoActionTakesItsDeadlineAlong() throws {
        let sessions = [WorkerSession(camera: "cam0", name: "left", exercise: .squat, side: .left)]
        var core = try WorkerCore(
            sessions: sessions, snapshotRate: 15, resume: [:], holeWait: .milliseconds(500))
        var actions: [WorkerCore.Action] = []
        core.start(now: .zero, into: &actions)
        let topic = try Topic.pose(camera: "cam0")
        for sequence: UInt64 in 0...2 {
            let header = WireHeader(kind: .pose, streamID: StreamID(7), sequence: sequence, sentAt: 0)
            core.receiveLive(
                FlatPose(timestamp: Double(sequence) / 30), on: topic, header: header, now: .zero,
                into: &actions)
        }
        let announcement = ReplayAnnouncement(
            endpoint: "ipc:///tmp/replay.sock",
            streams: [ReplayStreamInfo(topic: topic, stream: StreamID(7), first: 0, last: 9)])
        core.announced(announcement, now: .seconds(1), into: &actions)
        core.announced(announcement, now: .seconds(2), into: &actions)
        let asked = actions.contains { if case .requestPoses = $0 { true } else { false } }
        #expect(asked, "the tail 3...9 is asked for")
        #expect(core.deadline == .seconds(2) + .milliseconds(500))
        core.tick(now: .seconds(2) + .milliseconds(500), into: &actions)
        #expect(actions.isEmpty, "nothing past the tail was analysed: nothing to give up")
        #expect(core.deadline == nil)
    }
}
