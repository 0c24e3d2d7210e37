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
/// `espeak-ng` command into a directory: what the next patient hears.
struct VoiceSpeakerRunsTests {
    static let seen = MotionEvent.visibilityChanged(Visibility(isVisible: true, missingJoints: []))

    func event(_ event: MotionEvent, at t: Double, sequence: UInt64) throws -> BusEvent {
        BusEvent(
            event: event, t: t, topic: try Topic.event(camera: "cam0", session: "left"),
            header: WireHeader(kind: .event, streamID: StreamID(7), sequence: sequence, sentAt: 0))
    }

    /// The snapshot a worker publishes after the events of a pose (the voice decides then).
    func snapshot(at t: Double, sequence: UInt64) throws -> BusSnapshot {
        BusSnapshot(
            snapshot: MotionSnapshot(), t: t, topic: try Topic.snapshot(camera: "cam0", session: "left"),
            header: WireHeader(kind: .snapshot, streamID: StreamID(7), sequence: sequence, sentAt: 0))
    }

    /// A pose at which the patient came into view: its event, then its snapshot.
    func cameIntoView(_ speaker: VoiceSpeaker, at t: Double, sequence: UInt64) throws {
        speaker.receive(try event(Self.seen, at: t, sequence: sequence))
        speaker.receive(try snapshot(at: t, sequence: sequence))
    }

    /// A pose at which a clean rep ended.
    func repCounted(_ speaker: VoiceSpeaker, at t: Double, sequence: UInt64) throws {
        let rep = Rep(peak: 120, faults: [], start: t - 3, end: t)
        speaker.receive(try event(.repCompleted(rep), at: t, sequence: sequence))
        speaker.receive(try snapshot(at: t, sequence: sequence))
    }

    func run(_ number: UInt64, patient: String) throws -> BusRun {
        let plan = try SessionPlan(
            key: SessionKey(camera: "cam0", name: "left"),
            exerciseFile: SessionPlan.catalogExercise("shoulderAbduction"), analysis: .left, patient: patient,
            run: number)
        return BusRun(
            record: .started(plan), topic: try Topic.session(camera: "cam0", session: "left"),
            header: WireHeader(kind: .session, streamID: StreamID(7), sequence: number, sentAt: 0))
    }

    /// What the voice said, from its `utterances.jsonl`.
    func said(in directory: String) throws -> [String] {
        let text = try String(contentsOfFile: directory + "/utterances.jsonl", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "\"text\":\"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    func speaker(into directory: String) throws -> VoiceSpeaker {
        try VoiceSpeaker(
            texts: .builtIn(.english), engine: .command,
            sink: .directory(VoiceOutputDirectory(path: directory)),
            logger: Logger(label: "kinesia voice", sink: CapturedText()))
    }

    /// What a voice says over two runs on `cam0/left`: the first patient (whose run record the
    /// voice hears only when `firstPatient` is given) comes into view and does a clean rep, then
    /// the run of `secondPatient` starts and they come into view.
    func heard(firstPatient: String?, secondPatient: String) throws -> [String] {
        let directory = NSTemporaryDirectory() + "kinesia-voice-runs-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let speaker = try speaker(into: directory)
        if let firstPatient { speaker.receive(try run(1, patient: firstPatient)) }
        try cameIntoView(speaker, at: 1, sequence: 0)
        try repCounted(speaker, at: 15, sequence: 1)
        speaker.receive(try run(2, patient: secondPatient))
        try cameIntoView(speaker, at: 1, sequence: 0)
        speaker.finish()
        return try said(in: directory)
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
}
