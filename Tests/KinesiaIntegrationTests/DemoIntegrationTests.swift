import Foundation
import Glibc
import KinesiaAnalytics
import KinesiaJSON
import KinesiaMotion
import KinesiaSpeech
import KinesiaStore
import KinesiaTestSupport
import KinesiaVoice
import Testing

/// `kinesia demo` as a newcomer runs it: real broker, ingest, worker, record and voice processes,
/// and what they leave in the output directory.
@Suite(.serialized, .tags(.process))
struct DemoIntegrationTests {
    static let source = "sim:shoulderAbduction,side=both,seed=7"

    /// The lines of one session's summary block (`cam0/left (...)` up to the next block).
    func block(_ session: String, in output: String) -> [String] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(session + " (") }) else { return [] }
        return Array(lines[start...].prefix { $0 == lines[start] || $0.hasPrefix("  ") })
    }

    func value(_ label: String, in block: [String]) -> String? {
        block.first { $0.hasPrefix("  " + label) }.map {
            $0.dropFirst(2 + label.count).trimmingCharacters(in: .whitespaces)
        }
    }

    /// The process ids of the lines `demo: started NAME (pid N)`.
    func startedPIDs(in output: String) -> [Int32] {
        output.split(separator: "\n").compactMap { line -> Int32? in
            guard line.hasPrefix("demo: started "), let range = line.range(of: "(pid ") else { return nil }
            return Int32(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    /// The leading number of a summary value (`4   peaks 132.4, ...`).
    func leadingNumber(_ text: String?) -> Int? { text.flatMap { Int($0.prefix { $0.isNumber }) } }

    /// What a patient hears in the first 21.5 s of the default demo, in each language: the
    /// greeting, each side's counts with its side, the left side's correction of the trunk (no
    /// side: the trunk is both sides') and its rejected rep, named. 21.5 s stops between that
    /// rejected rep (18.9 s of pose time) and the right side's third clean one (22.7 s), with
    /// 2.5 s for the ingest to start.
    static let heard: [VoiceLanguage: [String]] = [
        .english: [
            "I can see you", "Left, 1", "Right, 1", "Left, 2", "Right, 2", "Keep your trunk upright",
            "Left side: that one does not count. Keep your trunk upright",
        ],
        .brazilianPortuguese: [
            "Estou te vendo", "Esquerda, 1", "Direita, 1", "Esquerda, 2", "Direita, 2",
            "Mantenha o tronco reto",
            "Esquerda: essa não conta. Mantenha o tronco reto",
        ],
        .spanish: [
            "Ya te veo", "Izquierda, 1", "Derecha, 1", "Izquierda, 2", "Derecha, 2", "Mantén el tronco recto",
            "Izquierda: esa no cuenta. Mantén el tronco recto",
        ],
    ]

    @Test(.timeLimit(.minutes(3)), arguments: VoiceLanguage.allCases)
    func aShortDemoSummarisesRecordsReportsAndSpeaksAndLeavesNoProcessBehind(_ language: VoiceLanguage)
        async throws
    {
        let directory = try ConsumerTestPaths.temporaryDirectory().path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = directory + "/out"
        let demo = try KinesiaProcess(
            "demo", ["demo", "--seconds", "21.5", "--language", language.code, "--out", out],
            directory: directory,
            logLevel: "warning")
        let status = await demo.waitForExit(timeout: .seconds(90))
        let output = demo.output
        #expect(status == 0, "demo failed:\n\(output)\n\(demo.errorText)")
        #expect(output.contains("demo: stopped every process; exit status 0"))
        #expect(output.contains("Summary of shoulderAbduction (seed 7):"))

        let store = try RecordStore(path: out + "/record.sqlite")
        defer { try? store.close() }
        let report = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        let utterances = TestProcess.readFile(out + "/voice/utterances.jsonl").split(separator: "\n")
            .compactMap { line -> (file: String, text: String, cue: String, session: String)? in
                guard let fields = try? JSONParser.parse(line), case .object(let object) = fields,
                    case .string(let file)? = object["file"], case .string(let text)? = object["text"],
                    case .string(let cue)? = object["cue"], case .string(let session)? = object["session"]
                else {
                    Issue.record("not an utterance: \(line)")
                    return nil
                }
                return (file, text, cue, session)
            }
        var cleanReps: [String: Int] = [:]
        for side in ["left", "right"] {
            let summary = block("cam0/\(side)", in: output)
            #expect(summary.first == "cam0/\(side) (shoulderAbduction, \(side) side)", "\(output)")
            // "clean reps      1   peaks 132.4"
            let clean = try #require(value("clean reps", in: summary), "\(output)")
            let count = leadingNumber(clean) ?? 0
            cleanReps[side] = count
            #expect(count >= 1, "no clean rep on the \(side): \(summary)")
            // The very reps `kinesia analyze` finds in the same simulated poses, in order.
            let expected = try await ConsumerTestPaths.analyze(
                Self.source, exercise: "shoulderAbduction", side: side)
            let peaks =
                clean.components(separatedBy: "peaks ").dropFirst().first?
                .components(separatedBy: ", ") ?? []
            #expect(!peaks.isEmpty)
            #expect(Array(expected.cleanPeaks.prefix(peaks.count)) == peaks)
            #expect(value("best", in: summary)?.hasSuffix("°") == true)
            let events = try #require(value("events", in: summary))
            #expect(events.contains("repCompleted"))

            // The database holds the events the view counted, and they are analyze's, in order.
            let recorded = try store.eventLines(camera: "cam0", session: side)
            let oracle = try await Oracle.events(
                source: Self.source, exercise: "shoulderAbduction", side: side)
            #expect(recorded.count == leadingNumber(events), "\(side): \(recorded.count) recorded, \(events)")
            #expect(Array(oracle.prefix(recorded.count)) == recorded, "\(side)")
            // The report shows the session's reps, clean and rejected, as the summary counts them.
            let judged = count + (leadingNumber(value("rejected reps", in: summary)) ?? -1)
            #expect(
                report.contains("data-session=\"\(side)\" data-rep-count=\"\(judged)\""),
                "\(side): \(judged) reps")
        }
        #expect(!report.contains("http://") && !report.contains("https://"))

        // The analytics session: a tempo per judged rep in the database, figures in the summary.
        let analytics = try store.analytics(camera: "cam0", session: "analytics").map(\.record)
        let tempos = analytics.filter { if case .repTempo = $0 { true } else { false } }
        let judgedEvents = try ["left", "right"].flatMap { try store.eventLines(camera: "cam0", session: $0) }
            .filter { $0.contains("\"rep\":") }
        #expect(tempos.count == judgedEvents.count, "\(analytics)")
        #expect(output.contains("Analytics (cam0/analytics):"))
        #expect(output.contains("  symmetry      "), "\(output)")
        #expect(output.contains("trend "), "\(output)")
        #expect(block("cam0/analytics", in: output).isEmpty, "the analytics session is not a rep counter")

        // Voice: what the patient hears, WAV after WAV, is the cues of the recorded events of both
        // sides (each utterance as long as its WAV), each side named; every clean rep count
        // spoken is one of the reps; every WAV is espeak-ng's own for its text.
        #expect(utterances.map(\.text) == Self.heard[language], "\(utterances.map(\.text))")
        var durations: [Double] = []
        for utterance in utterances {
            let wav = try Array(Data(contentsOf: URL(fileURLWithPath: out + "/voice/" + utterance.file)))
            durations.append(try WAVAudio(parsing: wav).duration)
            #expect(output.contains("\"\(utterance.text)\""), "\(utterance.text) not in the summary")
        }
        var timeline = VoiceTimeline(
            planner: VoiceCuePlanner(texts: try .builtIn(language), following: .sessions(["left", "right"])))
        var expected: [String] = []
        let speak = { (cue: VoiceCue) -> Double in
            expected.append(cue.text)
            return expected.count <= durations.count ? durations[expected.count - 1] : 1
        }
        // Both sides' events in pose-time order, as two live workers send them.
        var recorded: [(session: String, event: MotionEvent, t: Double)] = []
        for side in ["left", "right"] {
            for line in try store.eventLines(camera: "cam0", session: side) {
                let event = try MotionJSON.decodeEvent(line)
                recorded.append((side, event.event, event.t))
            }
        }
        let ordered = recorded.enumerated().sorted { ($0.element.t, $0.offset) < ($1.element.t, $1.offset) }
        for (session, event, t) in ordered.map(\.element) {
            _ = timeline.receive(event, session: session, at: t, speak: speak)
        }
        _ = timeline.finish(speak: speak)
        #expect(utterances.map(\.text) == expected)
        let counts = utterances.filter { $0.cue == "repCounted" }
        #expect(!counts.isEmpty, "no rep counted aloud: \(utterances)")
        for count in counts {
            let number = try #require(Int(count.text.split(separator: " ").last ?? ""), "\(count.text)")
            #expect((1...(cleanReps[count.session] ?? 0)).contains(number), "\(count)")
        }
        let espeakVoice = try VoiceTexts.builtIn(language).espeakVoice
        for utterance in utterances {
            let reference = directory + "/reference.wav"
            let text = directory + "/reference.txt"
            try Data(utterance.text.utf8).write(to: URL(fileURLWithPath: text))
            let espeak = try TestProcess(
                executable: "/usr/bin/espeak-ng", arguments: ["-v", espeakVoice, "-w", reference],
                environment: [:], standardInput: text)
            #expect(await espeak.waitForExit(timeout: .seconds(30)) == 0)
            let theirs = try Data(contentsOf: URL(fileURLWithPath: reference))
            let ours = try Data(contentsOf: URL(fileURLWithPath: out + "/voice/" + utterance.file))
            #expect(
                ours == theirs,
                "\(utterance.file) (\(utterance.text)) differs from espeak-ng -v \(espeakVoice) -w")
        }
        #expect(output.contains("Kept in \(out):"))
        #expect(output.contains("open file://\(out)/report.html"))

        // Every child the supervisor started is gone.
        let pids = startedPIDs(in: output)
        #expect(pids.count == 7, "\(output)")
        for pid in pids { #expect(!ConsumerTestPaths.isAlive(pid), "pid \(pid) outlived the demo") }
        // The private bus directory is removed, journals included; none is left in the user's
        // state directory.
        let bus = output.split(separator: "\n").first { $0.hasPrefix("demo: ") && $0.contains(", bus ") }
        let busDirectory = try #require(
            bus?.components(separatedBy: ", bus ").last?.components(separatedBy: ", ").first)
        #expect(!FileManager.default.fileExists(atPath: busDirectory))
        #expect(!FileManager.default.fileExists(atPath: directory + "/state"))
    }

    @Test func anOutputDirectoryWithADemoInItIsRefused() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("earlier".utf8).write(to: directory.appendingPathComponent("report.html"))
        let run = try await ConsumerTestPaths.run(["demo", "--out", directory.path])
        #expect(run.status == 1)
        #expect(run.error.contains("already holds a demo's output (report.html)"), "\(run.error)")
        #expect(
            try String(contentsOf: directory.appendingPathComponent("report.html"), encoding: .utf8)
                == "earlier")
    }

    @Test func sigintStopsTheDemoGracefullyWithASummaryAndNoProcessLeft() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let demo = try KinesiaProcess(
            "demo", ["demo", "--seconds", "60", "--out", directory.path + "/out"], directory: directory.path,
            logLevel: "warning")
        // Wait until the ingest runs, then interrupt as Control-C would.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while !demo.output.contains("started ingest-cam0"), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(1))
        demo.signal(SIGINT)
        let status = await demo.waitForExit(timeout: .seconds(30))
        let output = demo.output
        #expect(status == 0, "\(output)\n\(demo.errorText)")
        #expect(output.contains("demo: shutting down (SIGINT)"))
        #expect(output.contains("stopped early by SIGINT"))
        let pids = startedPIDs(in: output)
        #expect(pids.count == 7)
        for pid in pids { #expect(!ConsumerTestPaths.isAlive(pid), "pid \(pid) outlived the demo") }
    }

    /// Whether this machine has a sound output `kinesia voice` could play on.
    static var hasSoundOutput: Bool {
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
        let devices = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/snd")) ?? []
        return devices.contains { $0.hasPrefix("pcmC") }
            || ProcessInfo.processInfo.environment["PULSE_SERVER"] != nil
            || (!runtime.isEmpty
                && (FileManager.default.fileExists(atPath: runtime + "/pulse/native")
                    || FileManager.default.fileExists(atPath: runtime + "/pipewire-0")))
    }

    @Test(.enabled(if: !hasSoundOutput, "this machine has a sound output"))
    func speakWithoutASoundOutputFailsBeforeStartingAnything() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.path + "/out"
        let run = try await ConsumerTestPaths.run(["demo", "--speak", "--plain", "--out", out])
        #expect(run.status == 1)
        #expect(run.error.contains("no audio output on this machine"), "\(run.error)")
        #expect(!run.output.contains("demo: started"), "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func badOptionsAreUsageErrors() async throws {
        let run = try await ConsumerTestPaths.run(["demo", "--seconds", "0"])
        #expect(run.status == 64)
        #expect(run.error.contains("--seconds"))
        let unknown = try await ConsumerTestPaths.run(["demo", "--exercise", "juggling"])
        #expect(unknown.status == 64)
    }
}
