import Foundation
import KinesiaAnalytics
import KinesiaBus
import KinesiaClient
import KinesiaCueConsumers
public import KinesiaMotion
import KinesiaReport
import KinesiaService
import KinesiaStore
import KinesiaSupervisor
import KinesiaSystem
public import KinesiaVoice
import KinesiaWire
import Synchronization

/// `kinesia demo`: the whole fan-out on one box, for a newcomer, with one command.
///
/// In a private temporary bus directory it starts, as real child processes of the same
/// executable and under the ``Supervisor`` of `kinesia up`: a broker; a left, a right and an
/// analytics worker (`--session left=EXERCISE:left`, `right=EXERCISE:right`,
/// `analytics=EXERCISE:analytics`, one process each); the consumers `kinesia record --db` and
/// `kinesia voice --output` following both sides in `--language` (the `espeak-ng` command's
/// own WAV files, the side named in each cue of one side; with `--speak`, a second voice that
/// plays the same cues aloud); and
/// an ingest of the built-in simulator (`sim:EXERCISE,side=both,seed=N`, at the recording's
/// pace, looping). It shows the live view of `kinesia watch` in the foreground for `--seconds`
/// (counted from the moment the ingest starts), then stops everything gracefully (intake first,
/// then the workers, the consumers, the broker last), writes the report of the recorded
/// sessions as `kinesia report` does, prints each session's summary (clean reps, rejected reps
/// with their faults, the best value, the events received), the analytics figures, the texts
/// spoken and where the files are, and exits 0.
///
/// The database, the report and the WAV files are kept in `--out DIR` (default
/// `./kinesia-demo-YYYYMMDD-HHMMSS`); the bus directory, with the journals of the ingest and the
/// workers, is private and removed at the end.
///
/// The same seed gives the same poses, so the same reps in every run. Control-C stops early and
/// still prints the summary; a second Control-C kills the children at once. No child outlives
/// the demo: the supervisor reaps every one before the summary, and a child whose demo dies
/// is sent SIGTERM by the kernel (``ParentDeathSignal``).
public struct DemoCommand: ParsableCommand {
    /// `demo`, with its help.
    public static let configuration = CommandConfiguration(
        name: "demo",
        summary: "Run a broker, an ingest, workers and consumers with the live view, then summarise.",
        discussion: """
            Starts, in a temporary bus directory, a broker, a left, a right and an analytics \
            worker, kinesia record and kinesia voice (writing WAV files in --language, each side \
            named: "Left, 2"), and an ingest of a \
            simulated exercise (repeatable: seeded); shows the live view for --seconds, stops \
            everything, writes the HTML report and prints each session's reps, faults, best value \
            and events, the analytics (fatigue trend, symmetry), the texts spoken and where the \
            files are. The database, report and WAV files stay in --out DIR (default \
            ./kinesia-demo-YYYYMMDD-HHMMSS). --speak also plays the cues aloud (needs a sound \
            output). When standard output is not a terminal (or with --plain), prints progress \
            lines instead of redrawing. Needs nothing beyond the build.
            """)

    /// The options.
    public static var arguments: [Argument<DemoCommand>] {
        [
            .option(
                "seconds", \.seconds, valueName: "n",
                help: "How long the exercise runs once the ingest starts."),
            .option(
                "exercise", \.exercise, valueName: "id",
                help: "The catalog exercise to simulate and analyse."),
            .option(
                "seed", \.seed, valueName: "n",
                help: "The simulator's seed (the same seed gives the same reps)."),
            .option("language", \.language, valueName: "code", help: "The language of the voice cues."),
            .option(
                "out", \.output, valueName: "dir",
                help: "Where to keep the database, report and WAV files (default ./kinesia-demo-<time>)."),
            .flag(
                "speak", \.speak,
                help:
                    "Also play the voice cues aloud (PulseAudio, PipeWire or ALSA; WAV files are written anyway)."
            ),
            .flag("plain", \.plain, help: "Print lines instead of redrawing, even on a terminal."),
        ]
    }

    /// `--seconds`: 32 by default, a stop between two reps of the default exercise and seed
    /// (the right side's 4th rep ends at 29.9 s of pose time, the left side's 5th at 34.0 s), so
    /// that a late or early stop by a fraction of a second never changes the reps counted.
    public var seconds = 32.0
    /// `--exercise`.
    public var exercise = Exercise.named("shoulderAbduction")!
    /// `--seed`.
    public var seed = 7
    /// `--language`.
    public var language = VoiceLanguage.english
    /// `--out`: `nil` for `./kinesia-demo-YYYYMMDD-HHMMSS`.
    public var output: String?
    /// `--speak`.
    public var speak = false
    /// `--plain`.
    public var plain = false

    /// The camera of the demo.
    static let camera = "cam0"
    /// The analytics session's name.
    static let analyticsSession = "analytics"

    /// A command with every default.
    public init() {}

    /// Checks `--seconds` and `--seed`.
    public func validate() throws(CLIError) {
        guard seed >= 0 else { throw CLIError.usage("--seed must be 0 or more, got \(seed)") }
        guard seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw CLIError.usage("--seconds must be more than 0 and at most 86400")
        }
        if let output, output.isEmpty { throw CLIError.usage("--out needs a directory") }
    }

    /// The processes of the demo, on the bus `directory`, keeping what the consumers make in
    /// `output`.
    ///
    /// The ingest and the workers journal in the bus directory (`--state BUS/state/NAME`), so
    /// that their journals go with it; each in a directory of its own, as a worker records its
    /// sessions' starts per camera (`STATE/starts/<camera>.json`), which two workers of the
    /// same camera must not share.
    func topology(bus directory: String, output: DemoOutput) -> Topology {
        let camera = Self.camera
        let logLevel = ["KINESIA_LOG_LEVEL": "warning"]
        let state = { (name: String) in ["--state", directory + "/state/" + name] }
        var processes = [
            ProcessSpec(name: "broker", command: ["broker"], role: .broker, environment: logLevel)
        ]
        // One worker per session; a session's name is its kind (`left=ID:left`).
        for session in ["left", "right", Self.analyticsSession] {
            processes.append(
                ProcessSpec(
                    name: "worker-\(session)",
                    command: [
                        "worker", "--camera", camera, "--session", "\(session)=\(exercise.id):\(session)",
                    ]
                        + state("worker-\(session)"),
                    role: .worker, environment: logLevel))
        }
        processes.append(
            ProcessSpec(
                name: "record", command: ["record", "--db", output.database, "--camera", camera],
                role: .consumer, environment: logLevel))
        // Both sides, named: the voice follows both sessions from the first cue. The files are
        // the espeak-ng command's own (--engine command: the same text, the same bytes).
        let voice = [
            "voice", "--camera", camera, "--session", "left", "--session", "right", "--language",
            language.code,
        ]
        processes.append(
            ProcessSpec(
                name: "voice", command: voice + ["--engine", "command", "--output", output.voice],
                role: .consumer, environment: logLevel))
        if speak {
            processes.append(
                ProcessSpec(name: "voice-aloud", command: voice, role: .consumer, environment: logLevel))
        }
        processes.append(
            ProcessSpec(
                name: "ingest-\(camera)",
                command: [
                    "ingest", "--camera", camera, "--source", "sim:\(exercise.id),side=both,seed=\(seed)",
                    "--pace", "recording", "--loop",
                ] + state("ingest-\(camera)"), role: .ingest, environment: logLevel))
        return Topology(
            bus: directory, processes: processes, shutdown: ShutdownPolicy(deadline: .seconds(5)),
            restart: RestartLimits(maxRestarts: 3), startup: StartupPolicy(settle: .milliseconds(300)))
    }

    /// What each session is, for the summary.
    var labels: [WatchState.SessionID: String] {
        Dictionary(
            uniqueKeysWithValues: [BodySide.left, .right].map { side in
                (
                    WatchState.SessionID(camera: Self.camera, session: side.rawValue),
                    "\(exercise.id), \(side.rawValue) side"
                )
            })
    }

    /// Runs the demo.
    /// - Throws: ``CLIError/failure(_:)`` when the output or bus directory cannot be made,
    ///   `--speak` finds no sound output, a process of the demo failed, or nothing was heard from
    ///   the workers.
    public func run(context: CommandContext) async throws {
        if speak {
            // Said now rather than by a voice process that fails and is restarted in vain.
            do {
                _ = try AudioPlayer.find(environment: context.environment)
            } catch {
                throw CLIError.failure("--speak: \(error.reason): play the WAV files the demo writes instead")
            }
        }
        let output = DemoOutput.resolve(
            self.output, currentDirectory: FileManager.default.currentDirectoryPath, now: Date())
        try output.prepare()
        // Before any child exists: a signal from now on stops the demo, it does not end it.
        let signals = SignalStream([.interrupt, .terminate, .hangup])
        let directory: IPCDirectory
        do {
            directory = try IPCDirectory.makeTemporary(prefix: "kinesia-demo")
        } catch {
            throw CLIError.failure("cannot make a bus directory: \(error.message)")
        }
        defer { directory.remove() }
        let bus: BusAddress
        do {
            bus = try BusAddress(parsing: directory.path)
        } catch {
            throw CLIError.failure(error.description)
        }
        let topology = self.topology(bus: directory.path, output: output)
        try? topology.validate()

        let standardOutput = context.standardOutput
        let redraw = !plain && Terminal.isRedrawable(standardOutput, environment: context.environment)
        let log = Mutex<[String]>([])
        let (ingestStarted, ingestStartedContinuation) = AsyncStream<Void>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let ingestName = "ingest-\(Self.camera)"
        let supervisor = Supervisor(topology: topology) { event in
            if case .started(let name, _) = event, name == ingestName { ingestStartedContinuation.yield() }
            if redraw {
                log.withLock { $0 = Array(($0 + ["demo: \(event)"]).suffix(4)) }
            } else {
                standardOutput.write("demo: \(event)\n")
                standardOutput.flush()
            }
        }

        let seconds = self.seconds
        let exerciseID = exercise.id
        let view = LiveView(
            bus: bus, prefixes: [.kind(.snapshot), .kind(.event), .kind(.health)],
            mode: redraw ? .terminal : .plain,
            title: { elapsed in "kinesia demo \(exerciseID) | \(Int(elapsed)) s" },
            footer: { log.withLock { $0 } }, printsFinalView: false)
        if !redraw {
            standardOutput.write(
                "demo: \(exerciseID) on a simulated camera (seed \(seed)) for \(WatchRenderer.number(seconds, 0)) s, "
                    + "bus \(bus), output \(output.directory)\n")
        }
        let stop = StopToken()
        let interrupted = StopToken()

        async let collected = Self.onThread { try view.run(stop: stop, context: context) }
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await signal in signals {
                    interrupted.request(signal)
                    supervisor.requestShutdown(signal: signal)
                }
                return nil
            }
            group.addTask {
                for await _ in ingestStarted { break }
                guard (try? await Task.sleep(for: .seconds(double: seconds))) != nil else { return nil }
                supervisor.requestShutdown()
                return nil
            }
            group.addTask { await supervisor.run() }
            var status: Int32 = 1
            while let result = await group.next() {
                if let result {
                    status = result
                    break
                }
            }
            ingestStartedContinuation.finish()
            group.cancelAll()
            return status
        }
        // Every child has been reaped; the last messages are already in the view's queue.
        try? await Task.sleep(for: .milliseconds(200))
        stop.request()
        let state: WatchState
        do {
            state = try await collected
        } catch {
            throw CLIError.failure("cannot read the bus: \(error)")
        }

        // Every consumer has stopped: the database is complete and the WAV files written.
        let consumers = Self.readConsumers(output, log: context.logger)

        standardOutput.write(
            "\nSummary of \(exerciseID) (seed \(seed))"
                + (interrupted.signal.map { ", stopped early by \($0)" } ?? "")
                + ":\n")
        var lines = Self.sessionBlocks(
            WatchRenderer.summaryLines(state, labels: labels),
            leaving: WatchState.SessionID(camera: Self.camera, session: Self.analyticsSession))
        lines += DemoSummary.analyticsLines(
            consumers.analytics, session: "\(Self.camera)/\(Self.analyticsSession)")
        lines += DemoSummary.voiceLines(consumers.utterances, directory: output.voice)
        lines += DemoSummary.fileLines(
            output, recorded: consumers.recorded, report: consumers.report, wavFiles: consumers.wavFiles)
        standardOutput.write(lines.joined(separator: "\n") + "\n")
        standardOutput.flush()
        guard status == 0 else {
            throw CLIError.failure(
                "a process of the demo failed (exit status \(status)); see the lines above")
        }
        guard !state.sessions.isEmpty else {
            throw CLIError.failure("no event or snapshot arrived from the workers")
        }
        guard consumers.recorded != nil, consumers.report != nil else {
            throw CLIError.failure("the recording or its report failed; see the lines above")
        }
    }

    /// What the consumers left in the output directory.
    struct Consumers {
        /// The database's row counts; `nil` when it cannot be read.
        var recorded: (events: Int, snapshots: Int, analytics: Int)?
        /// The analytics session's records, in pose-time order.
        var analytics: [AnalyticsRecord] = []
        /// The report's sessions and their judged reps; `nil` when it was not written.
        var report: [(session: String, reps: Int)]?
        /// The utterances of `utterances.jsonl`.
        var utterances: [DemoUtterance] = []
        /// The WAV files in the voice directory.
        var wavFiles = 0
    }

    /// Reads the database back, writes the report from it (what `kinesia report --db DB
    /// --camera cam0 --out report.html` does) and reads the voice's utterances.
    static func readConsumers(_ output: DemoOutput, log: Logger) -> Consumers {
        var consumers = Consumers()
        do {
            let store = try RecordStore(path: output.database)
            defer { try? store.close() }
            consumers.recorded = (
                try store.count("events"), try store.count("snapshots"), try store.count("analytics")
            )
            consumers.analytics = try store.analytics(camera: camera, session: analyticsSession).map(\.record)
            do {
                let report = try ReportCommand.report(from: store, camera: camera, sessions: [])
                try Data(ReportPage.render(report).utf8).write(
                    to: URL(fileURLWithPath: output.report), options: .atomic)
                consumers.report = report.sessions.map { ($0.name, $0.reps.count) }
            } catch {
                log.error("cannot write the report \(output.report): \(error)")
            }
        } catch {
            log.error("cannot read the database \(output.database): \(error)")
        }
        let utterances =
            (try? String(contentsOfFile: output.voice + "/utterances.jsonl", encoding: .utf8)) ?? ""
        consumers.utterances = DemoUtterance.parse(jsonLines: utterances)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: output.voice)) ?? []
        consumers.wavFiles = files.filter { $0.hasSuffix(".wav") }.count
        return consumers
    }

    /// The summary's session blocks without `session`'s (the analytics session, summarised from
    /// its records instead of as reps it does not count).
    static func sessionBlocks(_ lines: [String], leaving session: WatchState.SessionID) -> [String] {
        var kept: [String] = []
        var skipping = false
        for line in lines {
            if !line.hasPrefix(" ") {
                skipping = line == session.description || line.hasPrefix(session.description + " (")
            }
            if !skipping { kept.append(line) }
        }
        return kept
    }

    /// Runs `body` on a thread of its own (libzmq sockets block and stay on one thread).
    private static func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result)
        async throws -> Result
    {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
            thread.name = "kinesia.demo.view"
            thread.start()
        }
    }
}
