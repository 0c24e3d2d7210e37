import Foundation
import KinesiaClient
import KinesiaControl
import KinesiaMotion
import KinesiaService
import KinesiaVoice
import KinesiaWire
import Testing

@testable import KinesiaCueConsumers

/// A voice that joined during a run (started late, or restarted), speaking with the real
/// `espeak-ng` command into a directory: what the patients hear. Each run's events, snapshots
/// and run records share one stream, as a pool worker sends them.
struct VoiceSpeakerRunsTests {
    static let seen = MotionEvent.visibilityChanged(Visibility(isVisible: true, missingJoints: []))

    /// The stream of run `run`.
    static func stream(_ run: UInt64) -> StreamID { StreamID(100 + run) }

    func event(_ event: MotionEvent, at t: Double, run: UInt64, sequence: UInt64) throws -> BusEvent {
        BusEvent(
            event: event, t: t, topic: try Topic.event(camera: "cam0", session: "left"),
            header: WireHeader(kind: .event, streamID: Self.stream(run), sequence: sequence, sentAt: 0))
    }

    /// The snapshot a worker publishes after the events of a pose (the voice decides then).
    func snapshot(at t: Double, run: UInt64, sequence: UInt64) throws -> BusSnapshot {
        BusSnapshot(
            snapshot: MotionSnapshot(), t: t, topic: try Topic.snapshot(camera: "cam0", session: "left"),
            header: WireHeader(kind: .snapshot, streamID: Self.stream(run), sequence: sequence, sentAt: 0))
    }

    /// A pose of run `run` with one event: the event, then the snapshot.
    func pose(
        _ event: MotionEvent, _ speaker: VoiceSpeaker, at t: Double, run: UInt64, sequence: UInt64
    ) throws {
        speaker.receive(try self.event(event, at: t, run: run, sequence: sequence))
        speaker.receive(try snapshot(at: t, run: run, sequence: sequence))
    }

    /// A clean rep that ended at `t`.
    static func rep(endingAt t: Double) -> MotionEvent {
        .repCompleted(Rep(peak: 120, faults: [], start: t - 3, end: t))
    }

    func runStarted(_ run: UInt64, patient: String) throws -> BusRun {
        let plan = try SessionPlan(
            key: SessionKey(camera: "cam0", name: "left"),
            exerciseFile: SessionPlan.catalogExercise("shoulderAbduction"), analysis: .left, patient: patient,
            run: run)
        return BusRun(
            record: .started(plan), topic: try Topic.session(camera: "cam0", session: "left"),
            header: WireHeader(kind: .session, streamID: Self.stream(run), sequence: 0, sentAt: 0))
    }

    /// What a voice says while `play` feeds it, from its `utterances.jsonl`.
    func said(_ play: (VoiceSpeaker) throws -> Void) throws -> [String] {
        let directory = NSTemporaryDirectory() + "kinesia-voice-runs-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let speaker = try VoiceSpeaker(
            texts: .builtIn(.english), engine: .command,
            sink: .directory(VoiceOutputDirectory(path: directory)),
            logger: Logger(label: "kinesia voice", sink: CapturedText()))
        try play(speaker)
        speaker.finish()
        let text = try String(contentsOfFile: directory + "/utterances.jsonl", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "\"text\":\"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// Two runs on `cam0/left`: the first patient (whose run record the voice hears only when
    /// `firstPatient` is given) comes into view and does a clean rep, then the run of
    /// `secondPatient` starts and they come into view.
    func heard(firstPatient: String?, secondPatient: String) throws -> [String] {
        try said { speaker in
            if let firstPatient { speaker.receive(try runStarted(1, patient: firstPatient)) }
            try pose(Self.seen, speaker, at: 1, run: 1, sequence: 0)
            try pose(Self.rep(endingAt: 15), speaker, at: 15, run: 1, sequence: 1)
            speaker.receive(try runStarted(2, patient: secondPatient))
            try pose(Self.seen, speaker, at: 1, run: 2, sequence: 0)
        }
    }

    /// The demo's failure once: the voice missed the first patient's run record, greeted that
    /// patient from their events, and said "I can see you again" to the second.
    @Test func aPatientAfterARunTheVoiceNeverSawBeginIsGreetedNotWelcomedBack() throws {
        let heard = try heard(firstPatient: nil, secondPatient: "demo-b")
        #expect(heard == ["I can see you", "1", "I can see you"])
    }

    @Test func theSamePatientsNextRunIsWelcomedBack() throws {
        let heard = try heard(firstPatient: "demo-a", secondPatient: "demo-a")
        #expect(heard == ["I can see you", "1", "I can see you again"])
    }

    @Test func anotherPatientsRunIsGreetedAnew() throws {
        let heard = try heard(firstPatient: "demo-a", secondPatient: "demo-b")
        #expect(heard == ["I can see you", "1", "I can see you"])
    }

    /// A voice that joined during a run, then hears that run's `runStarted` (late, or sent again
    /// by a worker that rebuilt the run on another box): the same patient, the count goes on.
    @Test func theRecordOfTheRunTheVoiceJoinedNeitherGreetsNorCountsAgain() throws {
        let heard = try said { speaker in
            try pose(Self.seen, speaker, at: 1, run: 1, sequence: 0)
            try pose(Self.rep(endingAt: 15), speaker, at: 15, run: 1, sequence: 1)
            speaker.receive(try runStarted(1, patient: "demo-a"))
            try pose(Self.rep(endingAt: 25), speaker, at: 25, run: 1, sequence: 2)
        }
        #expect(heard == ["I can see you", "1", "2"])
    }
}
