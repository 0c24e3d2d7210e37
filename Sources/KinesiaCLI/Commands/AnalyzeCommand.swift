import Foundation
import KinesiaControl
public import KinesiaIngest
public import KinesiaMotion
public import KinesiaService

/// `kinesia analyze FILE --exercise ID --side left|right`: runs one analysis over a recording
/// and prints what happened.
///
/// Text (the default) prints one line per event, then a summary; `--format json` prints JSON
/// Lines in the ``MotionJSON`` format, the last line being the summary. `--frames` adds the raw
/// and smoothed primary measure at every pose; `--baseline N` starts a baseline of N reps at the
/// beginning. The same recording always prints the same bytes.
public struct AnalyzeCommand: ParsableCommand {
    /// The output format.
    public enum Format: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// One readable line per event, then a summary.
        case text
        /// JSON Lines (``MotionJSON``), the last line the summary.
        case json
    }

    /// `analyze`, with its help.
    public static let configuration = CommandConfiguration(
        name: "analyze", summary: "Run one analysis over a recording and print what happened.",
        discussion: """
            FILE is a JSON Lines recording (one pose a line: {"t","w","h","points","confidence"}) \
            or a folder of OpenPose *_keypoints.json frames, or sim:EXERCISE[,key=value...] for \
            one block of the built-in simulator (the poses 'kinesia ingest --source sim:...' sends), \
            or video:PATH for a video through the pose detector (--mirrored, --roi X0,Y0,X1,Y1: the \
            poses 'kinesia ingest --source video:PATH' sends), or journal:PATH[,camera=ID] for a \
            camera's pose journal (what an ingest sent: a stream directory, or a state directory \
            holding one camera's stream; with camera=ID, that camera's newest; with stream=ID, \
            that stream; first=N and last=N keep the poses of those sequence numbers and between: \
            a run's, from its runEnded's firstPose and lastPose). --exercise-file F \
            analyses with changed thresholds: {"exercise":ID, "reps":{"start","end","minPeak"} or \
            "hold":{"threshold","seconds"}, "formRules":{FAULT:LIMIT}, "sessionRules":{...}}, read \
            strictly (FILE:LINE:COLUMN errors).
            A FIFO, /dev/stdin or <(command) is read as a stream to its end. \
            Text output: one line per event, then a summary. JSON output (--format json): one \
            object per line with "type" first; the last line is {"type":"summary",...}. The summary \
            counts the poses dropped as bad input, by reason (rejectedPoses), and a warning names \
            them. Exits 1 when FILE holds no pose or none could be analysed.
            """)

    /// The file, the exercise and side, and the output options.
    public static var arguments: [Argument<AnalyzeCommand>] {
        [
            .positional(
                "file", \.file,
                help:
                    "A JSON Lines recording, a folder of OpenPose JSON frames, sim:EXERCISE, video:PATH or "
                    + "journal:PATH[,camera=ID][,stream=ID][,first=N][,last=N]."),
            .option(
                "exercise", \.exercise, valueName: "id", help: "The catalog exercise (or --exercise-file)."),
            .option(
                "exercise-file", \.exerciseFile, valueName: "file",
                help:
                    "A catalog exercise with changed thresholds (JSON: exercise, reps, hold, formRules, sessionRules)."
            ),
            .option(
                "side", \.side, valueName: "side", required: true, help: "The patient's side to analyse."),
            .option(
                "format", \.format, valueName: "format", help: "Output format."),
            .flag("frames", \.frames, help: "Also print the raw and smoothed measure at every pose."),
            .option(
                "baseline", \.baseline, valueName: "n",
                help: "Start a baseline of N clean reps at the beginning."),
            .option(
                "keypoints", \.keypoints, valueName: "order",
                help: "OpenPose keypoint order (default: from the keypoint count: 25 body25, 18 coco)."),
            .option(
                "fps", \.fps, valueName: "fps", help: "OpenPose frames per second."),
        ] + CameraArguments.arguments(\.detector, forDevices: false)
    }

    /// The recording file or OpenPose folder.
    public var file = ""
    /// The exercise (this or ``exerciseFile`` is required).
    public var exercise: Exercise?
    /// `--exercise-file`: an exercise with changed thresholds (``ExerciseFile``).
    public var exerciseFile: String?
    /// The side (required).
    public var side: BodySide?
    /// Text or JSON Lines.
    public var format = Format.text
    /// Whether to print a line per pose.
    public var frames = false
    /// Reps of a baseline started at the beginning, if any.
    public var baseline: Int?
    /// The OpenPose keypoint order, when not detected.
    public var keypoints: OpenPoseFormat?
    /// OpenPose frames per second.
    public var fps = 30.0
    /// `--mirrored` and `--roi` for a `video:` source.
    public var detector = CameraOptions()

    /// A command with every default.
    public init() {}

    /// Checks `--baseline` and `--fps`.
    public func validate() throws(CLIError) {
        if let baseline, baseline < 1 {
            throw CLIError.usage("--baseline must be at least 1, got \(baseline)")
        }
        guard fps > 0 else { throw CLIError.usage("--fps must be positive, got \(fps)") }
        guard exercise != nil || exerciseFile != nil else {
            throw CLIError.usage("give --exercise ID or --exercise-file FILE")
        }
    }

    /// The exercise: the file's when ``exerciseFile`` is given (its id must then be
    /// ``exercise``'s, if that is given too), else the catalog's.
    /// - Throws: ``CLIError`` for a file that is not valid, or ids that differ.
    public func resolvedExercise() throws(CLIError) -> Exercise {
        guard let exerciseFile else {
            guard let exercise else { throw CLIError.usage("give --exercise ID or --exercise-file FILE") }
            return exercise
        }
        let fromFile = try ExerciseFile.loadForCommand(exerciseFile)
        if let exercise, exercise.id != fromFile.id {
            throw CLIError.usage(
                "--exercise \(exercise.id) and --exercise-file \(exerciseFile) (\(fromFile.id)) differ")
        }
        return fromFile
    }

    /// Reads the recording and prints the analysis to standard output; poses the analysis
    /// dropped are counted by reason in the summary and in a warning.
    /// - Throws: ``CLIError/failure(_:)`` naming the file (and line) when it is missing or
    ///   malformed, when it holds no pose, or when the analysis could use none of its poses.
    public func run(context: CommandContext) async throws {
        guard let side else { throw CLIError.usage("missing --side") }
        let exercise = try resolvedExercise()
        let log = context.logger
        let poses = try PoseSource.load(
            file, openPose: OpenPoseRecording.Options(format: keypoints, fps: fps), camera: detector,
            onDetectorMessage: { log.warning("detector: \($0)") }, onWarning: { log.warning($0) })
        guard !poses.isEmpty else {
            throw CLIError.failure("\(file): no pose to analyse (the recording is empty)")
        }
        let summary = Self.analyze(
            poses, exercise: exercise, side: side, format: format, frames: frames, baseline: baseline,
            output: context.standardOutput)
        let dropped = summary.rejectedPoses
        guard dropped.total < poses.count else {
            throw CLIError.failure(
                "\(file): none of its \(poses.count) poses could be analysed (\(dropped.summary))")
        }
        if dropped.total > 0 {
            log.warning("\(file): \(dropped.summary) of \(poses.count)" + Self.hint(dropped))
        }
    }

    /// What usually causes the drops, when one reason says it.
    private static func hint(_ dropped: PoseRejections) -> String {
        dropped.timestampNotIncreasing > 0
            ? " (timestampNotIncreasing: the time went back, as in recordings joined end to end; "
                + "only poses after the latest time so far are analysed)" : ""
    }

    /// Runs the analysis over `poses` and writes the report to `output` (pure but for `output`).
    /// - Returns: The summary it wrote last, with the poses the analysis dropped.
    @discardableResult
    public static func analyze(
        _ poses: [Pose], exercise: Exercise, side: BodySide, format: Format, frames: Bool, baseline: Int?,
        output: any TextSink
    ) -> MotionSummary {
        var analyzer = MotionAnalyzer(exercise: exercise, side: side)
        if let baseline { analyzer.startBaseline(reps: baseline) }
        var reps: [Rep] = []
        for pose in poses {
            let events = analyzer.process(pose)
            if frames {
                let frame = MotionFrame(
                    t: pose.timestamp, raw: analyzer.rawValue, value: analyzer.snapshot.value)
                output.write((format == .json ? MotionJSON.encode(frame) : TextReport.line(frame)) + "\n")
            }
            for event in events {
                switch event {
                case .repCompleted(let rep), .repRejected(let rep): reps.append(rep)
                default: break
                }
                let line =
                    format == .json
                    ? MotionJSON.encode(event, at: pose.timestamp)
                    : TextReport.line(event, at: pose.timestamp)
                output.write(line + "\n")
            }
        }
        // The poses are over: a jump ahead in time that nothing confirmed is dropped.
        analyzer.finish()
        let snapshot = analyzer.snapshot
        let summary = MotionSummary(
            repCount: snapshot.repCount, rejectedCount: snapshot.rejectedCount, best: snapshot.best,
            reps: reps, rejectedPoses: analyzer.rejectedPoses)
        output.write((format == .json ? MotionJSON.encode(summary) : TextReport.line(summary)) + "\n")
        return summary
    }
}
