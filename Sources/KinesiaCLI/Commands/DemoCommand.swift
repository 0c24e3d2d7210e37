import Foundation
import KinesiaAnalytics
import KinesiaBus
import KinesiaClient
import KinesiaControl
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

/// `kinesia demo`: a clinic's day on one box, for a newcomer, with one command.
///
/// In a private temporary bus directory it starts, as real child processes of the same
/// executable and under the ``Supervisor`` of `kinesia up`: a broker; the coordinator (`kinesia
/// coordinator`); a pool worker (`kinesia worker --pool demo`) that takes its sessions at
/// runtime; the consumers `kinesia record --db` and `kinesia voice --output` following both
/// sides in `--language` (the `espeak-ng` command's own WAV files, the side named in each cue
/// of one side; with `--speak`, a second voice that plays the same cues aloud). Then two
/// patients come one after the other to camera `cam0` (``DemoDay``): for each, the demo starts
/// a left, a right and an analytics session through the coordinator (a run each, with the
/// patient's reference), plays the camera (the built-in simulator,
/// `sim:EXERCISE,side=both,seed=N`, a seed per patient, at the recording's pace) for half of
/// `--seconds`, and stops the sessions (their runs end). It shows the live view of `kinesia
/// watch` in the foreground meanwhile, then stops everything gracefully (the workers, the
/// consumers, the broker last), writes the report of the recorded runs as `kinesia report
/// --run` does, prints each run's summary (patient, clean reps, rejected reps with their
/// faults, the best value, the events recorded), the analytics figures, the texts spoken and
/// where the files are, and exits 0.
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
        summary: "A clinic's day on one box: two patients' runs through the control plane, then a summary.",
        discussion: """
            Starts, in a temporary bus directory, a broker, the coordinator, a pool worker, \
            kinesia record and kinesia voice (writing WAV files in --language, each side named: \
            "Left, 2"); then two patients come to camera cam0 one after the other: for each, a \
            left, a right and an analytics session are started through the coordinator (a run \
            each), the camera plays a simulated exercise (repeatable: seeded) for half of \
            --seconds, and the sessions are stopped. Shows the live view meanwhile, stops \
            everything, writes the HTML report of the runs and prints each run's patient, reps, \
            faults, best value and events, the analytics (fatigue trend, symmetry), the texts \
            spoken and where the files are. The database, report and WAV files stay in --out DIR (default \
            ./kinesia-demo-YYYYMMDD-HHMMSS). --speak also plays the cues aloud (needs a sound \
            output). When standard output is not a terminal (or with --plain), prints progress \
            lines instead of redrawing. Needs nothing beyond the build.
            """)

    /// The options.
    public static var arguments: [Argument<DemoCommand>] {
        [
            .option(
                "seconds", \.seconds, valueName: "n",
                help: "How long the two patients' sets last together (half each)."),
            .option(
                "exercise", \.exercise, valueName: "id",
                help: "The catalog exercise to simulate and analyse."),
            .option(
                "seed", \.seed, valueName: "n",
                help:
                    "The first patient's simulator seed, the next one's the second's (the same seeds give the same reps)."
            ),
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

    /// `--seconds`: 35 by default, 17.5 s for each patient: a stop between two reps of the
    /// default exercise and seeds (seed 7: the right side's 2nd rep ends at 15.0 s of pose time,
    /// the left's 3rd at 18.9 s; seed 8: the right's 2nd at 16.0 s, the left's 3rd at 20.2 s),
    /// so that a late or early stop by a fraction of a second never changes the reps counted.
    public var seconds = 35.0
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

    /// The patients of the day, in order: `demo-a` with `--seed`, `demo-b` with the next.
    var patients: [DemoDay.Patient] {
        [
            DemoDay.Patient(reference: "demo-a", seed: seed),
            DemoDay.Patient(reference: "demo-b", seed: seed + 1),
        ]
    }

    /// The processes of the demo, on the bus `directory`, keeping what the consumers make in
    /// `output`.
    ///
    /// The coordinator and the worker keep their state in the bus directory (`--state
    /// BUS/state/NAME`), so that it goes with it. The camera is the demo's own (``DemoDay``).
    func topology(bus directory: String, output: DemoOutput) -> Topology {
        let camera = Self.camera
        let logLevel = ["KINESIA_LOG_LEVEL": "warning"]
        let state = { (name: String) in ["--state", directory + "/state/" + name] }
        var processes = [
            ProcessSpec(name: "broker", command: ["broker"], role: .broker, environment: logLevel),
            ProcessSpec(
                name: "coordinator", command: ["coordinator"] + state("coordinator"), after: ["broker"],
                environment: logLevel),
            ProcessSpec(
                name: "worker", command: ["worker", "--pool", DemoDay.pool] + state("worker"), role: .worker,
                after: ["coordinator"], environment: logLevel),
        ]
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
        return Topology(
            bus: directory, processes: processes, shutdown: ShutdownPolicy(deadline: .seconds(5)),
            restart: RestartLimits(maxRestarts: 3), startup: StartupPolicy(settle: .milliseconds(300)))
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
        let tell: @Sendable (String) -> Void = { line in
            if redraw {
                log.withLock { $0 = Array(($0 + ["demo: \(line)"]).suffix(4)) }
            } else {
                standardOutput.write("demo: \(line)\n")
                standardOutput.flush()
            }
        }
        let supervisor = Supervisor(topology: topology) { event in tell("\(event)") }
        let day = DemoDay(
            bus: bus, camera: Self.camera, exercise: exercise, patients: patients, secondsEach: seconds / 2,
            state: directory.path + "/state", database: output.database, log: context.logger, say: tell)

        let seconds = self.seconds
        let exerciseID = exercise.id
        let view = LiveView(
            bus: bus, prefixes: [.kind(.snapshot), .kind(.event), .kind(.health)],
            mode: redraw ? .terminal : .plain,
            title: { elapsed in "kinesia demo \(exerciseID) | \(Int(elapsed)) s" },
            footer: { log.withLock { $0 } }, printsFinalView: false)
        if !redraw {
            standardOutput.write(
                "demo: \(exerciseID), \(patients.count) patients on camera \(Self.camera) one after the other "
                    + "(seeds \(patients.map { String($0.seed) }.joined(separator: ", ")); "
                    + "\(WatchRenderer.number(seconds / 2, 1)) s each), bus \(bus), output \(output.directory)\n"
            )
        }
        let stop = StopToken()
        let interrupted = StopToken()
        let dayFailure = DemoDay.FailureBox()

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
                // The day, then the end of the site.
                let failure = try? await Self.onThread {
                    day.run(stop: interrupted) {}
                }
                if let failure = failure ?? nil {
                    tell("the day stopped: \(failure)")
                    dayFailure.value.withLock { $0 = failure }
                }
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
            "\nSummary of \(exerciseID) (patients "
                + patients.map { "\($0.reference), seed \($0.seed)" }.joined(separator: "; ") + ")"
                + (interrupted.signal.map { ", stopped early by \($0)" } ?? "")
                + ":\n")
        var lines = consumers.runs
        lines += DemoSummary.voiceLines(consumers.utterances, directory: output.voice)
        lines += DemoSummary.fileLines(
            output, recorded: consumers.recorded, report: consumers.report, wavFiles: consumers.wavFiles)
        standardOutput.write(lines.joined(separator: "\n") + "\n")
        standardOutput.flush()
        guard status == 0 else {
            throw CLIError.failure(
                "a process of the demo failed (exit status \(status)); see the lines above")
        }
        if let failure = dayFailure.value.withLock({ $0 }) {
            throw CLIError.failure("the day stopped: \(failure)")
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
        /// Each run's summary lines (its reps and events, or its analytics), in run order.
        var runs: [String] = []
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
            consumers.runs = try Self.runLines(store)
            do {
                // The runs of both sides, one after the other: what `kinesia report --run` shows.
                var runs: [UInt64] = []
                for row in try store.runRows() {
                    if case .started(let plan)? = try? RunRecord(json: row.json), plan.analysis != .analytics
                    {
                        runs.append(plan.run)
                    }
                }
                let report = try ReportCommand.runReport(from: store, runs: runs, patient: nil)
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

    /// Each run's block, in run order: a side's reps and events (from its run's end and the
    /// events recorded on its stream), or the analytics run's figures.
    static func runLines(_ store: RecordStore) throws -> [String] {
        var lines: [String] = []
        var byRun:
            [UInt64: [(streamID: UInt64, camera: String, session: String, json: String, recordedAt: String?)]] =
                [:]
        var order: [UInt64] = []
        for row in try store.runRows() {
            guard let run = try? RunRecord(json: row.json).run else { continue }
            if byRun[run] == nil { order.append(run) }
            byRun[run, default: []].append(row)
        }
        if order.isEmpty { return ["no run was recorded"] }
        for run in order {
            guard let rows = byRun[run], let first = rows.first else { continue }
            let records = rows.compactMap { try? RunRecord(json: $0.json) }
            guard case .started(let plan)? = records.first else { continue }
            let who = "run \(run), patient \(plan.patient ?? "-")"
            if plan.analysis == .analytics {
                let records = try store.analytics(
                    camera: first.camera, session: first.session, streamID: first.streamID)
                lines += DemoSummary.analyticsLines(records, session: "\(plan.key), \(who)")
                continue
            }
            lines.append("\(plan.key), \(who) (\(plan.exercise.id), \(plan.analysis.rawValue) side)")
            let events = try store.eventLines(
                camera: first.camera, session: first.session, streamID: first.streamID
            )
            .compactMap { try? MotionJSON.decodeEvent($0) }
            var reps: [Rep] = []
            var kinds: [String: Int] = [:]
            for (_, event) in events {
                kinds[event.name, default: 0] += 1
                if case .repCompleted(let rep) = event { reps.append(rep) }
                if case .repRejected(let rep) = event { reps.append(rep) }
            }
            let clean = reps.filter(\.isClean)
            var cleanLine = "  clean reps      " + String(clean.count).padded(4)
            if !clean.isEmpty {
                cleanLine += "peaks " + clean.map { WatchRenderer.number($0.peak, 1) }.joined(separator: ", ")
            }
            lines.append(cleanLine.droppingTrailingSpaces())
            let rejected = reps.filter { !$0.isClean }
            lines.append(("  rejected reps   " + String(rejected.count).padded(4)).droppingTrailingSpaces())
            for rep in rejected {
                lines.append(
                    "    t " + WatchRenderer.seconds(rep.end) + ": "
                        + rep.faults.map(\.rawValue).joined(separator: ", ")
                        + " (peak " + WatchRenderer.number(rep.peak, 1) + ")")
            }
            var best = "-"
            if case .ended(let end)? = records.last { best = WatchRenderer.degrees1(end.best) }
            lines.append("  best            " + best)
            var eventsLine = "  events          \(events.count)"
            let sorted = kinds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            if !sorted.isEmpty {
                eventsLine += ": " + sorted.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            }
            lines.append(eventsLine)
        }
        return lines
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
