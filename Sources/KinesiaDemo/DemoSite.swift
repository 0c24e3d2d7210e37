public import KinesiaMotion
public import KinesiaSupervisor
public import KinesiaVoice

/// What `kinesia demo` runs: the day's exercise, patients and length, and the processes of its
/// site on one box.
///
/// The site: a broker; the coordinator; a pool worker (`kinesia worker --pool demo`) that
/// takes its sessions at runtime; the consumers `kinesia record --db` and `kinesia voice
/// --output` following both sides in ``language`` (the `espeak-ng` command's own WAV files,
/// the side named in each cue of one side; with ``speak``, a second voice that plays the same
/// cues aloud). The camera is the demo's own (``DemoDay``).
public struct DemoSite: Hashable, Sendable {
    /// The camera of the demo.
    public static let camera = "cam0"

    /// The exercise simulated and analysed.
    public var exercise: Exercise
    /// The first patient's simulator seed (the second's is the next).
    public var seed: Int
    /// How long the two patients' sets last together (half each).
    public var seconds: Double
    /// The language of the voice cues.
    public var language: VoiceLanguage
    /// Whether a second voice plays the cues aloud.
    public var speak: Bool

    /// A site.
    public init(exercise: Exercise, seed: Int, seconds: Double, language: VoiceLanguage, speak: Bool) {
        self.exercise = exercise
        self.seed = seed
        self.seconds = seconds
        self.language = language
        self.speak = speak
    }

    /// The patients of the day, in order: `demo-a` with ``seed``, `demo-b` with the next.
    public var patients: [DemoDay.Patient] {
        [
            DemoDay.Patient(reference: "demo-a", seed: seed),
            DemoDay.Patient(reference: "demo-b", seed: seed + 1),
        ]
    }

    /// The processes of the demo, on the bus `directory`, keeping what the consumers make in
    /// `output`.
    ///
    /// The coordinator and the worker keep their state in the bus directory (`--state
    /// BUS/state/NAME`), so that it goes with it.
    public func topology(bus directory: String, output: DemoOutput) -> Topology {
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
}
