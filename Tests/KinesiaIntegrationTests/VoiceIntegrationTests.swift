import Foundation
import KinesiaJSON
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
        _ = await waitUntil(timeout: .seconds(60)) {
            let now =
                (try? FileManager.default.attributesOfItem(atPath: output + "/utterances.jsonl")[.size]
                    as? Int) ?? 0
            defer { size = now }
            return now == size && now > 0
        }
        try await Task.sleep(for: .seconds(2))
        voice.signal(SIGTERM)
        #expect(await voice.waitForExit(timeout: .seconds(60)) == 0, "\(voice.diagnostics)")

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

    /// A patient's voice (pt-BR, the whole camera) and a therapist's (en, both sessions named)
    /// on one sound output: a stand-in `paplay` logs when each file starts and ends, and no two
    /// utterances ever overlap, while both voices have their turns. Two more voices write to
    /// one `--output DIR`: every number is taken once, every line has its file.
    @Test(.timeLimit(.minutes(3)))
    func twoVoicesOnOneSoundOutputTakeTurnsAndNeverTalkOverEachOther() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let bin = topology.directory + "/bin"
        let played = topology.directory + "/played.log"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let player = """
            #!/bin/sh
            echo "start $(date +%s.%N) $1" >> \(played)
            sleep 0.3
            echo "end $(date +%s.%N) $1" >> \(played)

            """
        try Data(player.utf8).write(to: URL(fileURLWithPath: bin + "/paplay"))
        chmod(bin + "/paplay", 0o755)
        let sound = [
            "PULSE_SERVER": "unix:" + topology.directory + "/no-pulse",
            "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "XDG_RUNTIME_DIR": topology.directory,
        ]
        let shared = topology.directory + "/shared"
        let voices = [
            try topology.start(
                "voice-patient", ["voice", "--camera", "cam0", "--language", "pt-BR"], environment: sound),
            try topology.start(
                "voice-therapist",
                ["voice", "--camera", "cam0", "--session", "left", "--session", "right", "--language", "en"],
                environment: sound),
            try topology.start(
                "voice-file-en", ["voice", "--camera", "cam0", "--language", "en", "--output", shared]),
            try topology.start(
                "voice-file-es", ["voice", "--camera", "cam0", "--language", "es", "--output", shared]),
        ]
        for voice in voices {
            #expect(await voice.waitForError(containing: "connected"), "\(voice.diagnostics)")
        }
        #expect(voices[0].errorText.contains("playing with paplay"), "\(voices[0].diagnostics)")
        _ = try await topology.startWorker(
            "worker",
            [
                "--camera", "cam0", "--session", "left=shoulderAbduction:left", "--session",
                "right=shoulderAbduction:right",
            ])
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", "sim:shoulderAbduction,side=both,seed=7", "--pace",
                "max",
            ])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        // Every cue was decided at once (pace max); the voices play them in turns, the others'
        // waiting, for a few seconds.
        try await Task.sleep(for: .seconds(8))
        for voice in voices {
            voice.signal(SIGTERM)
            #expect(await voice.waitForExit(timeout: .seconds(30)) == 0, "\(voice.diagnostics)")
        }

        // Each utterance's start and end, as the player saw them: one at a time.
        var intervals: [(file: String, start: Double, end: Double)] = []
        for line in TestProcess.readFile(played).split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 3, let time = Double(fields[1]) else { continue }
            if fields[0] == "start" {
                intervals.append((fields[2], time, .infinity))
            } else if let index = intervals.lastIndex(where: { $0.file == fields[2] }) {
                intervals[index].end = time
            }
        }
        intervals.sort { $0.start < $1.start }
        #expect(intervals.allSatisfy { $0.end.isFinite }, "\(intervals)")
        for (earlier, later) in zip(intervals, intervals.dropFirst()) {
            #expect(later.start >= earlier.end, "\(later.file) started while \(earlier.file) played")
        }
        // Both voices had turns, and alternated at least once.
        let owners = intervals.map { interval in
            voices.prefix(2).firstIndex { interval.file.contains("kinesia-voice-\($0.pid)/") } ?? -1
        }
        #expect(!owners.contains(-1), "\(intervals.map(\.file))")
        #expect(Set(owners) == [0, 1], "\(intervals.map(\.file))")
        #expect(zip(owners, owners.dropFirst()).contains { $0 != $1 })
        // The therapist's cues name the side; the patient's (the whole camera) too, once both
        // workers' sessions were heard from.
        #expect(voices[1].errorText.contains("saying \"Left, 1\""), "\(voices[1].diagnostics)")
        #expect(voices[0].errorText.contains("saying \"Estou te vendo\""), "\(voices[0].diagnostics)")

        // One directory, two voices: numbers taken once, in order, each line with its file.
        let lines = try Self.utterances(in: shared)
        let wavFiles = try FileManager.default.contentsOfDirectory(atPath: shared).filter {
            $0.hasSuffix(".wav")
        }.sorted()
        #expect(lines.count > 10)
        #expect(lines.map(\.file) == wavFiles, "\(lines.map(\.file))")
        #expect(wavFiles == (1...wavFiles.count).map { String(format: "%04d.wav", $0) })
        #expect(lines.contains { $0.text == "I can see you" } && lines.contains { $0.text == "Ya te veo" })
    }

    /// The texts spoken for `sim:squat,seed=3`, left side, in English.
    static let squatSeed3 = [
        "I can see you", "1", "2", "3", "4", "Keep your trunk upright",
        "That one does not count. Keep your trunk upright",
    ]
}
