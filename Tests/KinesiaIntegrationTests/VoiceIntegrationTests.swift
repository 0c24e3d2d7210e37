import Foundation
import KinesiaMotion
import KinesiaSpeech
import KinesiaTestSupport
import KinesiaVoice
import Testing

/// `kinesia voice --output DIR` behind a real broker, worker and ingest: the utterances are the
/// cues of the events `kinesia analyze` finds for the same poses, as WAV files that are
/// byte for byte what the `espeak-ng` command writes for the same texts.
@Suite(.serialized, .tags(.process))
struct VoiceIntegrationTests {
    /// One line of `utterances.jsonl`.
    struct Utterance {
        var file: String
        var text: String
        var cue: String
        var t: Double
    }

    static func utterances(in directory: String) throws -> [Utterance] {
        let text = (try? String(contentsOfFile: directory + "/utterances.jsonl", encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            guard case .object(let object) = try JSONParser.parse(line),
                case .string(let file) = object["file"], case .string(let said) = object["text"],
                case .string(let cue) = object["cue"], case .number(let t) = object["t"]
            else { throw POSIXError(.EINVAL) }
            return Utterance(file: file, text: said, cue: cue, t: t)
        }
    }

    /// The cues the planner chooses for `events`, each taking the length of the WAV spoken in
    /// its place (the texts decide the lengths; the test reads them from the files).
    static func expectedTexts(events: [(MotionEvent, Double)], durations: [Double]) throws -> [String] {
        var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: try .builtIn(.english)))
        var said: [String] = []
        let speak = { (cue: VoiceCue) -> Double in
            said.append(cue.text)
            return said.count <= durations.count ? durations[said.count - 1] : 1
        }
        for (event, t) in events { _ = timeline.receive(event, session: "left", at: t, speak: speak) }
        _ = timeline.finish(speak: speak)
        return said
    }

    @Test(.timeLimit(.minutes(4)))
    func theUtterancesAreTheCuesOfTheEventsAndEspeakNGsOwnWAVs() async throws {
        let source = "sim:squat,seed=3"
        let lines = try await Oracle.events(source: source, exercise: "squat", side: "left")
        let events = try lines.map { try MotionJSON.decodeEvent($0) }
        #expect(events.count > 5)

        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let output = topology.directory + "/voice"
        let voice = try topology.start(
            "voice",
            [
                "voice", "--camera", "cam0", "--session", "left", "--language", "en", "--engine", "command",
                "--output", output,
            ])
        #expect(await voice.waitForError(containing: "connected"), "\(voice.diagnostics)")
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "left=squat:left"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source, "--pace", "max"])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        // Every event reached the voice (its log names the last one's time), then it stops and
        // decides what still waited.
        var size = -1
        _ = await waitUntil(timeout: .seconds(20)) {
            let now =
                (try? FileManager.default.attributesOfItem(atPath: output + "/utterances.jsonl")[.size]
                    as? Int) ?? 0
            defer { size = now }
            return now == size && now > 0
        }
        try await Task.sleep(for: .seconds(2))
        voice.signal(SIGTERM)
        #expect(await voice.waitForExit(timeout: .seconds(20)) == 0, "\(voice.diagnostics)")

        let said = try Self.utterances(in: output)
        #expect(!said.isEmpty)
        let wavFiles = try FileManager.default.contentsOfDirectory(atPath: output).filter {
            $0.hasSuffix(".wav")
        }.sorted()
        #expect(wavFiles == said.map(\.file))
        #expect(wavFiles.first == "0001.wav" && wavFiles.last == String(format: "%04d.wav", said.count))
        var durations: [Double] = []
        for utterance in said {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: output + "/" + utterance.file)))
            let audio = try WAVAudio(parsing: bytes)  // a valid RIFF header, sizes included
            #expect(audio.sampleRate == 22050 && audio.duration > 0.1)
            durations.append(audio.duration)
        }
        let expected = try Self.expectedTexts(events: events.map { ($0.event, $0.t) }, durations: durations)
        #expect(said.map(\.text) == expected, "\(voice.diagnostics)")
        // What a person hears for this simulation: every clean rep counted, the rejected ones
        // explained, the first sight of the joints greeted (the events of `kinesia analyze`).
        #expect(said.map(\.text) == Self.squatSeed3, "\(said.map(\.text))")

        // The espeak-ng command writes the same bytes for the same text (--engine command: a
        // fresh engine per cue; libespeak-ng in one process carries state between utterances).
        for utterance in said {
            let reference = topology.directory + "/reference.wav"
            let text = topology.directory + "/reference.txt"
            try Data(utterance.text.utf8).write(to: URL(fileURLWithPath: text))
            let espeak = try TestProcess(
                executable: "/usr/bin/espeak-ng", arguments: ["-v", "en-us", "-w", reference],
                environment: [:], standardInput: text)
            #expect(await espeak.waitForExit(timeout: .seconds(30)) == 0)
            let theirs = try Data(contentsOf: URL(fileURLWithPath: reference))
            let ours = try Data(contentsOf: URL(fileURLWithPath: output + "/" + utterance.file))
            #expect(ours == theirs, "\(utterance.file) (\(utterance.text)) differs from espeak-ng -w")
        }
    }

    /// The texts spoken for `sim:squat,seed=3`, left side, in English.
    static let squatSeed3 = [
        "I can see you", "1", "2", "3", "4", "Keep your trunk upright",
        "That one does not count. Keep your trunk upright",
    ]
}
