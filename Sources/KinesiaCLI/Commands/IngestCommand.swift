import Foundation
import KinesiaBus
import KinesiaClient
public import KinesiaIngest
import KinesiaJournal
public import KinesiaMotion
public import KinesiaPublishJournal
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// `kinesia ingest --camera ID --source SRC`: publishes a camera's poses on `pose/<camera>/`.
///
/// SRC is a JSON Lines recording, an OpenPose folder, `-` (standard input: one JSON pose per
/// line, as any detector can print them), or `sim:EXERCISE[,key=value...]` (the built-in
/// simulator). The ingest waits until something subscribes to its camera (at most
/// `--wait-seconds`), then sends at the recording's own pace or as fast as possible.
///
/// High-water mark: the ingest's socket refuses a send instead of dropping it silently.
/// `--pace max` then pauses a millisecond and retries, so a burst never overruns the broker's
/// queue; `--pace recording` (live timing) drops the pose and counts it: poses are
/// drop-and-detect, the receivers see the gap in the sequence numbers.
public struct IngestCommand: ParsableCommand {
    /// How fast poses go out.
    public typealias Pace = IngestService.Pace

    /// `ingest`, with its help.
    public static let configuration = CommandConfiguration(
        name: "ingest", summary: "Publish a camera's poses on the bus (pose/<camera>/).",
        discussion: """
            SRC: a JSON Lines recording, a folder of OpenPose JSON frames, - for standard input \
            (one pose per line: {"t","w","h","points","confidence"}; malformed lines are reported \
            and skipped), or sim:EXERCISE[,seed=N,reps=N,side=left|right|both,fps=N,...] for the \
            built-in simulator; or video:PATH (a video file) or camera:/dev/videoN (a webcam) through \
            the pose detector (MediaPipe Pose, installed by scripts/setup), with --mirrored, \
            --roi X0,Y0,X1,Y1, and --size WxH and --fps for a camera. A camera is always live: the \
            newest frame is analysed and older ones dropped (framesDropped on health/).
            Waits until something subscribes to pose/<camera>/ (at most --wait-seconds, then sends \
            anyway). Standard input is sent as it comes, never paced. Progress goes to standard \
            error every 5 seconds. With --pace recording, a jump of the recording's time (a wait \
            over 5 s, or time going back) is not waited for: it is logged and the pace goes on \
            from there (timeJumps). Exits 0 at the end of the source, or on SIGINT/SIGTERM; 1 when \
            the source ended without a usable pose (an empty file, or only malformed lines); warns \
            when poses were sent but nobody ever subscribed to them (none can have been delivered).
            """)

    /// The options.
    public static var arguments: [Argument<IngestCommand>] {
        [
            .option(
                "camera", \.camera, valueName: "id", required: true, help: "The camera name (pose/<id>/)."),
            .option(
                "source", \.source, valueName: "src", required: true,
                help:
                    "A recording, an OpenPose folder, - (standard input), sim:EXERCISE[,key=value...], "
                    + "video:PATH or camera:/dev/videoN."),
            .option(
                "pace", \.pace, valueName: "pace", help: "How fast to send."),
            .option(
                "speed", \.speed, valueName: "factor",
                help: "With --pace recording (or a video file given as camera:): play this many times faster."
            ),
            .flag("loop", \.loop, help: "Start over at the end, timestamps still increasing."),
            .flag(
                "keep-serving", \.keepServing,
                help:
                    "At the end of a recording or simulation, keep answering replay requests for its poses "
                    + "until SIGINT/SIGTERM (for workers that restart later); the stream is not ended."),
            .option(
                "wait-seconds", \.waitSeconds, valueName: "s",
                help: "How long to wait for a subscriber before sending anyway (0: do not wait)."),
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "ingest-<camera>"),
            .option(
                "keypoints", \.keypoints, valueName: "order",
                help: "OpenPose keypoint order (default: from the keypoint count)."),
            .option(
                "fps", \.fps, valueName: "fps",
                help: "OpenPose frames per second, or the frame rate asked of a camera."),
        ] + CameraArguments.arguments(\.detector, forDevices: true)
            + JournalOptions.arguments(
                \.journal,
                resumes: "Start a new pose stream even when the state directory has this camera's stream "
                    + "of the same source to resume.")
            + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--camera`.
    public var camera: String?
    /// `--source`.
    public var source: String?
    /// `--pace`.
    public var pace = Pace.recording
    /// `--speed`.
    public var speed = 1.0
    /// `--loop`.
    public var loop = false
    /// `--keep-serving`.
    public var keepServing = false
    /// `--wait-seconds`.
    public var waitSeconds = 30.0
    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()
    /// `--name`.
    public var name: String?
    /// `--keypoints`.
    public var keypoints: OpenPoseFormat?
    /// `--fps`.
    public var fps = 30.0
    /// `--mirrored`, `--roi`, `--size` (for `video:` and `camera:` sources).
    public var detector = CameraOptions()

    /// `--state`, `--no-journal`, `--fsync`, `--journal-max-bytes`, `--journal-max-age`,
    /// `--new-session`.
    public var journal = JournalOptions()

    /// A command with every default.
    public init() {}

    /// Checks the camera name and the numbers.
    public func validate() throws(CLIError) {
        if let camera, !Topic.isValidName(camera) {
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        guard speed > 0 else { throw CLIError.usage("--speed must be positive, got \(speed)") }
        guard waitSeconds >= 0 else { throw CLIError.usage("--wait-seconds must be 0 or more") }
        guard fps > 0 else { throw CLIError.usage("--fps must be positive, got \(fps)") }
        if loop, let source, CameraSource.isCamera(source) {
            throw CLIError.usage("--loop applies to recordings and simulations, not to \(source)")
        }
    }

    /// Publishes the source.
    public func run(context: CommandContext) async throws {
        guard let camera, let source else { throw CLIError.usage("missing --camera or --source") }
        var cameraOptions = detector
        cameraOptions.fps = fps
        cameraOptions.speed = speed
        let topic = try Topic.pose(camera: camera)
        let (bus, insecure) = try BusProcess.bus(bus, security: security, role: .ingest, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment, fallback: BusProcess.derivedName("ingest", camera))
        let log = context.logger
        let poses = try PoseSource.open(
            source, loop: loop, openPose: OpenPoseRecording.Options(format: keypoints, fps: fps),
            camera: cameraOptions, onDetectorMessage: { log.warning("detector: \($0)") },
            onWarning: { log.warning($0) })
        let service = IngestService(
            IngestService.Configuration(
                process: BusProcessIdentity(bus: bus, name: name, insecure: insecure), topic: topic,
                pace: pace,
                speed: speed, waitSeconds: waitSeconds, source: source, loop: loop, journal: journal,
                keepServing: keepServing, environment: context.environment),
            source: poses, log: log)
        try await BusProcess.run(context: context, thread: "ingest") { stop in try service.run(until: stop) }
    }
}

extension IngestService.Pace: ExpressibleByArgument {}
