import Foundation
import KinesiaAnalytics
import KinesiaBus
import KinesiaClient
import KinesiaControl
import KinesiaCueConsumers
import KinesiaDemo
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

    /// The day and its site, as the options give them.
    var site: DemoSite {
        DemoSite(exercise: exercise, seed: seed, seconds: seconds, language: language, speak: speak)
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
        do {
            try output.prepare()
        } catch {
            throw CLIError.failure(error.description)
        }
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
        let site = self.site
        try? site.topology(bus: directory.path, output: output).validate()

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
        let service = DemoService(
            site: site, bus: bus, busDirectory: directory.path, output: output, log: context.logger,
            tell: tell)

        let exerciseID = exercise.id
        let view = LiveView(
            bus: bus, prefixes: [.kind(.snapshot), .kind(.event), .kind(.health)],
            mode: redraw ? .terminal : .plain,
            title: { elapsed in "kinesia demo \(exerciseID) | \(Int(elapsed)) s" },
            footer: { log.withLock { $0 } }, printsFinalView: false)
        let patients = site.patients
        if !redraw {
            standardOutput.write(
                "demo: \(exerciseID), \(patients.count) patients on camera \(DemoSite.camera) one after the other "
                    + "(seeds \(patients.map { String($0.seed) }.joined(separator: ", ")); "
                    + "\(TextFigures.number(seconds / 2, 1)) s each), bus \(bus), output \(output.directory)\n"
            )
        }
        let stop = StopToken()
        async let collected = DedicatedThread.run(named: "kinesia.demo.view") {
            try view.run(stop: stop, context: context)
        }
        // The supervisor keeps its own deadlines; a second Control-C cancels the service, which
        // kills the children at once.
        let runner = ServiceRunner(logger: nil, stopDeadline: nil, forcedEnd: .cancelService)
        let outcome: DemoService.Outcome
        do {
            outcome = try await runner.run(service, signals: signals)
        } catch {
            // The demo's run throws nothing: not reached.
            throw CLIError.failure("the demo stopped: \(error)")
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
        let consumers = DemoResults.read(output, log: context.logger)

        standardOutput.write(
            "\nSummary of \(exerciseID) (patients "
                + patients.map { "\($0.reference), seed \($0.seed)" }.joined(separator: "; ") + ")"
                + (outcome.interruptedBy.map { ", stopped early by \($0)" } ?? "")
                + ":\n")
        var lines = consumers.runs
        lines += DemoSummary.voiceLines(consumers.utterances, directory: output.voice)
        lines += DemoSummary.fileLines(
            output, recorded: consumers.recorded, report: consumers.report, wavFiles: consumers.wavFiles)
        standardOutput.write(lines.joined(separator: "\n") + "\n")
        standardOutput.flush()
        guard outcome.status == 0 else {
            throw CLIError.failure(
                "a process of the demo failed (exit status \(outcome.status)); see the lines above")
        }
        if let failure = outcome.dayFailure {
            throw CLIError.failure("the day stopped: \(failure)")
        }
        guard !state.sessions.isEmpty else {
            throw CLIError.failure("no event or snapshot arrived from the workers")
        }
        guard consumers.recorded != nil, consumers.report != nil else {
            throw CLIError.failure("the recording or its report failed; see the lines above")
        }
    }
}
