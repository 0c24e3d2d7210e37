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
    /// The patients of the default demo, with their simulations.
    static let patients = [
        ("demo-a", "sim:shoulderAbduction,side=both,seed=7"),
        ("demo-b", "sim:shoulderAbduction,side=both,seed=8"),
    ]

    /// The lines of one run's summary block (`cam0/left, run 1, ...` up to the next block).
    func block(_ header: String, in output: String) -> [String] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(header) }) else { return [] }
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

    /// What the patients hear in a demo of 27 s (13.5 s each), in each language: the first
    /// patient greeted and counted on both sides; the second greeted too (another patient's
    /// runs: the voice reads the runs' patients on `session/`), counted from one, its
    /// shoulders corrected (no side: both shoulders) and its rejected rep named. 13.5 s stops
    /// between the first patient's second left rep (11.0 s of pose time) and its second right one
    /// (15.0 s), and between the second patient's rejected rep (12.4 s) and its second right one
    /// (16.0 s).
    static let heard: [VoiceLanguage: [String]] = [
        .english: [
            "I can see you", "Left, 1", "Right, 1", "Left, 2", "I can see you", "Left, 1", "Right, 1",
            "Level your shoulders", "Left side: that one does not count. Level your shoulders",
        ],
        .brazilianPortuguese: [
            "Estou te vendo", "Esquerda, 1", "Direita, 1", "Esquerda, 2", "Estou te vendo",
            "Esquerda, 1",
            "Direita, 1", "Nivele os ombros", "Esquerda: essa não conta. Nivele os ombros",
        ],
        .spanish: [
            "Ya te veo", "Izquierda, 1", "Derecha, 1", "Izquierda, 2", "Ya te veo", "Izquierda, 1",
            "Derecha, 1", "Nivela los hombros", "Izquierda: esa no cuenta. Nivela los hombros",
        ],
    ]

    @Test(.timeLimit(.minutes(3)), arguments: VoiceLanguage.allCases)
    func aShortDemoRunsTwoPatientsThroughTheControlPlaneAndRecordsReportsAndSpeaksEachRun(
        _ language: VoiceLanguage
    ) async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory().path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = directory + "/out"
        let demo = try KinesiaProcess(
            "demo", ["demo", "--seconds", "27", "--language", language.code, "--out", out],
            directory: directory,
            logLevel: "warning")
        // While it runs: its dashboard's address, and the sessions of the first patient there,
        // with their run's exercise, side and patient.
        var address: Substring?
        let told = await waitUntil(timeout: .seconds(60)) {
            address =
                demo.output.components(separatedBy: "demo: dashboard: open ").dropFirst().first?
                .split(separator: " ").first
            return address != nil
        }
        #expect(told, "\(demo.output)")
        if let address, let login = URLComponents(string: String(address)),
            let token = login.queryItems?.first(where: { $0.name == "token" })?.value, let port = login.port
        {
            var sessions = ""
            // A bound against a hang only: 30 s passed once while the whole test run stalled.
            let shown = await eventually(timeout: .seconds(90)) {
                sessions =
                    (try? await Offload.run(
                        "/usr/bin/curl",
                        [
                            "-s", "-H", "Authorization: Bearer \(token)",
                            "http://127.0.0.1:\(port)/api/v1/sessions",
                        ],
                        environment: [:]
                    ).output) ?? ""
                return sessions.contains(
                    "\"camera\":\"cam0\",\"name\":\"left\",\"exercise\":\"shoulderAbduction\",\"side\":\"left\",\"patient\":\"demo-a\""
                )
            }
            #expect(shown, "\(sessions)")
        }
        let status = await demo.waitForExit(timeout: .seconds(120))
        let output = demo.output
        #expect(status == 0, "demo failed:\n\(output)\n\(demo.errorText)")
        #expect(output.contains("demo: stopped every process; exit status 0"))
        // Each patient's runs are new streams: routine, nothing lost, so nothing warns of them.
        #expect(!(output + demo.errorText).contains("the sender restarted"), "\(demo.errorText)")
        #expect(output.contains("Summary of shoulderAbduction (patients demo-a, seed 7; demo-b, seed 8):"))
        // The day went through the control plane: each session started, then stopped, as runs.
        #expect(
            output.contains("demo: patient demo-a: cam0/left started on worker worker (run 1)"), "\(output)")
        #expect(output.contains("demo: patient demo-b: cam0/analytics stopped (run 6 on worker worker)"))

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
        // Each patient's runs, in order: run 1 left, 2 right, 3 analytics of demo-a; 4, 5, 6 of demo-b.
        let runs = try store.runRows()
        var cleanReps: [String: Int] = [:]
        var recordedByPatient: [[(session: String, event: MotionEvent, t: Double)]] = []
        for (index, (patient, source)) in Self.patients.enumerated() {
            var recorded: [(session: String, event: MotionEvent, t: Double)] = []
            for (offset, side) in ["left", "right"].enumerated() {
                let run = 3 * index + offset + 1
                let header = "cam0/\(side), run \(run), patient \(patient) (shoulderAbduction, \(side) side)"
                let summary = block(header, in: output)
                #expect(summary.first == header, "\(output)")
                let clean = try #require(value("clean reps", in: summary), "\(output)")
                let count = leadingNumber(clean) ?? 0
                cleanReps["\(patient) \(side)"] = count
                #expect(count >= 1, "no clean rep of \(patient) on the \(side): \(summary)")
                // The very reps `kinesia analyze` finds in the patient's simulated poses, in order.
                let expected = try await ConsumerTestPaths.analyze(
                    source, exercise: "shoulderAbduction", side: side)
                let peaks =
                    clean.components(separatedBy: "peaks ").dropFirst().first?.components(separatedBy: ", ")
                    ?? []
                #expect(!peaks.isEmpty)
                #expect(Array(expected.cleanPeaks.prefix(peaks.count)) == peaks)
                #expect(value("best", in: summary)?.hasSuffix("°") == true)
                let events = try #require(value("events", in: summary))
                #expect(events.contains("repCompleted"))
                // The run's recorded events (its stream's) are analyze's, with the run's number.
                let stream = try #require(runs.first { $0.json.contains("\"run\":\"\(run)\"") }?.streamID)
                let lines = try store.eventLines(camera: "cam0", session: side, streamID: stream)
                let oracle = try await Oracle.events(
                    source: source, exercise: "shoulderAbduction", side: side)
                #expect(
                    lines.count == leadingNumber(events), "run \(run): \(lines.count) recorded, \(events)")
                #expect(Array(oracle.prefix(lines.count)) == lines, "run \(run)")
                for line in lines {
                    let event = try MotionJSON.decodeEvent(line)
                    recorded.append((side, event.event, event.t))
                }
                // The report shows the run, named with its patient.
                #expect(report.contains("Run \(run) ("), "run \(run) in the report")
                #expect(report.contains("cam0/\(side), shoulderAbduction \(side), patient \(patient)"))
            }
            recordedByPatient.append(recorded)
            #expect(
                output.contains("Analytics (cam0/analytics, run \(3 * index + 3), patient \(patient)):"),
                "\(output)")
        }
        #expect(report.contains("<h1>Kinesia report: runs 1, 2, 4, 5 (patients demo-a, demo-b)</h1>"))
        #expect(!report.contains("http://") && !report.contains("https://"))
        #expect(output.contains("  symmetry      "), "\(output)")
        #expect(output.contains("trend "), "\(output)")

        // Voice: what the patients hear, WAV after WAV, is the cues of the recorded events of both
        // sides, the first patient's then the second's (each utterance as long as its WAV), each
        // side named; every clean rep count spoken is one of the reps; every WAV is espeak-ng's
        // own for its text.
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
        for (index, recorded) in recordedByPatient.enumerated() {
            if index > 0 {
                // The first patient's runs ended (their last snapshots completed their time);
                // the next patient's runs are new streams of another patient: the voice starts
                // their counts over and greets them.
                _ = timeline.finish(speak: speak)
                timeline.patientChanged("right")
                timeline.patientChanged("left")
            }
            let ordered = recorded.enumerated().sorted {
                ($0.element.t, $0.offset) < ($1.element.t, $1.offset)
            }
            for (session, event, t) in ordered.map(\.element) {
                _ = timeline.receive(event, session: session, at: t, speak: speak)
            }
        }
        _ = timeline.finish(speak: speak)
        #expect(utterances.map(\.text) == expected)
        let counts = utterances.filter { $0.cue == "repCounted" }
        #expect(!counts.isEmpty, "no rep counted aloud: \(utterances)")
        let mostClean = cleanReps.values.max() ?? 0
        for count in counts {
            let number = try #require(Int(count.text.split(separator: " ").last ?? ""), "\(count.text)")
            #expect((1...mostClean).contains(number), "\(count)")
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
        #expect(pids.count == 5, "\(output)")
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
        while !demo.output.contains("camera cam0 plays"), clock.now < deadline {
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
        #expect(pids.count == 5)
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
