public import KinesiaMotion
import KinesiaWire

/// One session a worker hosts, as `--session [CAMERA/]NAME=EXERCISE:SIDE` gives it.
///
/// ```swift
/// let session = try WorkerSession(parsing: "left=shoulderAbduction:left", defaultCamera: "cam0")
/// session.camera   // "cam0"
/// ```
public struct WorkerSession: Hashable, Sendable {
    /// The camera whose poses it analyses.
    public var camera: String
    /// The session's name (in `event/<camera>/<name>/`).
    public var name: String
    /// The exercise.
    public var exercise: Exercise
    /// The side.
    public var side: BodySide

    /// Makes a session.
    public init(camera: String, name: String, exercise: Exercise, side: BodySide) {
        self.camera = camera
        self.name = name
        self.exercise = exercise
        self.side = side
    }

    /// What makes two runs of the session the same session (its stream identity's `session`):
    /// the exercise and the side.
    public var identity: String { "\(ExerciseFile.identity(of: exercise)):\(side.rawValue)" }

    /// Parses `[CAMERA/]NAME=EXERCISE:SIDE`; EXERCISE may be `@FILE`, an exercise file
    /// (``ExerciseFile``) with changed thresholds.
    /// - Parameters:
    ///   - text: The value of `--session`.
    ///   - defaultCamera: `--camera`, used when the value names no camera.
    /// - Throws: ``CLIError/usage(_:)`` naming what is wrong, with the valid exercises or sides.
    public init(parsing text: String, defaultCamera: String?) throws(CLIError) {
        let expected = "expected [CAMERA/]NAME=EXERCISE:SIDE, e.g. cam0/left=shoulderAbduction:left"
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
        }
        let target = parts[0].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let camera: String
        let name: String
        switch target.count {
        case 1:
            guard let defaultCamera else {
                throw CLIError.usage(
                    "--session \(text.quotedExcerpt()) names no camera: give --camera or write CAMERA/NAME=EXERCISE:SIDE"
                )
            }
            camera = defaultCamera
            name = target[0]
        case 2:
            camera = target[0]
            name = target[1]
        default:
            throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
        }
        for (field, value) in [("camera", camera), ("session name", name)] where !Topic.isValidName(value) {
            throw CLIError.usage(
                "in --session \(text.quotedExcerpt()): " + Topic.invalidNameMessage(value, role: field))
        }
        // The side follows the last ':' (an exercise file's path may hold others).
        guard let colon = parts[1].lastIndex(of: ":") else {
            throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
        }
        let analysis = [String(parts[1][..<colon]), String(parts[1][parts[1].index(after: colon)...])]
        if analysis[0].hasPrefix("@") {
            let file = try ExerciseFile.load(String(analysis[0].dropFirst()))
            guard let side = BodySide(rawValue: analysis[1]) else {
                throw CLIError.usage(
                    "unknown side \(analysis[1].quotedExcerpt()) in --session \(text.quotedExcerpt()); valid sides: "
                        + BodySide.allCases.map(\.rawValue).joined(separator: ", "))
            }
            self.init(camera: camera, name: name, exercise: file, side: side)
            return
        }
        guard !analysis[0].contains(":") else {
            throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
        }
        guard let exercise = Exercise.named(analysis[0]) else {
            throw CLIError.usage(
                "unknown exercise \(analysis[0].quotedExcerpt()) in --session \(text.quotedExcerpt()); valid exercises: "
                    + Exercise.catalog.map(\.id).joined(separator: ", "))
        }
        guard let side = BodySide(rawValue: analysis[1]) else {
            throw CLIError.usage(
                "unknown side \(analysis[1].quotedExcerpt()) in --session \(text.quotedExcerpt()); valid sides: "
                    + BodySide.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.init(camera: camera, name: name, exercise: exercise, side: side)
    }
}

/// When a worker publishes a session's snapshot: after the first pose, whenever the rep counts
/// change, and otherwise at most `rate` times a second of pose time. A pure function of the
/// pose sequence, so the same poses give the same snapshots.
struct SnapshotThrottle: Sendable {
    /// The shortest pose-time interval between two snapshots without a count change.
    let interval: Double
    private var lastTime: Double?
    private var lastCounts: (Int, Int)?

    /// Rounding slack, so that frames exactly `interval` apart (60 fps at 15 Hz: every fourth)
    /// are not skipped for a last-bit difference.
    static let tolerance = 1e-6

    init(rate: Double) {
        interval = 1 / rate
    }

    /// Whether to publish the snapshot taken after the pose at `time`; records it if so.
    mutating func shouldPublish(_ snapshot: MotionSnapshot, at time: Double) -> Bool {
        let counts = (snapshot.repCount, snapshot.rejectedCount)
        let changed = lastCounts.map { $0 != counts } ?? true
        let due = lastTime.map { time - $0 >= interval - Self.tolerance || time < $0 } ?? true
        guard changed || due else { return false }
        lastTime = time
        lastCounts = counts
        return true
    }
}
