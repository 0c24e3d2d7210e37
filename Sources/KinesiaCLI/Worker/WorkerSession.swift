public import KinesiaMotion
import KinesiaWire

/// One session a worker hosts, as `--session [CAMERA/]NAME=EXERCISE:SIDE` gives it
/// (`EXERCISE:analytics` for both sides' analytics).
///
/// ```swift
/// let session = try WorkerSession(parsing: "left=shoulderAbduction:left", defaultCamera: "cam0")
/// session.camera   // "cam0"
/// let analytics = try WorkerSession(parsing: "analytics=squat:analytics", defaultCamera: "cam0")
/// analytics.analysis   // .analytics
/// ```
public struct WorkerSession: Hashable, Sendable {
    /// What a session analyses.
    public enum Analysis: Hashable, Sendable {
        /// One side's motion session: its events and snapshots.
        case side(BodySide)
        /// Both sides' analytics (``MotionAnalytics``): tempo, symmetry and set records.
        case analytics
    }

    /// The word after `EXERCISE:` that asks for ``Analysis/analytics``.
    public static let analyticsKeyword = "analytics"

    /// The camera whose poses it analyses.
    public var camera: String
    /// The session's name (in `event/<camera>/<name>/`).
    public var name: String
    /// The exercise.
    public var exercise: Exercise
    /// One side, or both sides' analytics.
    public var analysis: Analysis

    /// The side of a one-side session; `nil` for analytics.
    public var side: BodySide? {
        if case .side(let side) = analysis { side } else { nil }
    }

    /// Makes a one-side session.
    public init(camera: String, name: String, exercise: Exercise, side: BodySide) {
        self.init(camera: camera, name: name, exercise: exercise, analysis: .side(side))
    }

    /// Makes a session.
    public init(camera: String, name: String, exercise: Exercise, analysis: Analysis) {
        self.camera = camera
        self.name = name
        self.exercise = exercise
        self.analysis = analysis
    }

    /// `EXERCISE:SIDE` or `EXERCISE:analytics`, as given.
    public var analysisText: String {
        switch analysis {
        case .side(let side): "\(exercise.id):\(side.rawValue)"
        case .analytics: "\(exercise.id):\(Self.analyticsKeyword)"
        }
    }

    /// What makes two runs of the session the same session (its stream identity's `session`):
    /// the exercise (with any changed thresholds) and the side, or `analytics`.
    public var identity: String {
        switch analysis {
        case .side(let side): "\(ExerciseFile.identity(of: exercise)):\(side.rawValue)"
        case .analytics: "\(ExerciseFile.identity(of: exercise)):\(Self.analyticsKeyword)"
        }
    }

    /// Parses `[CAMERA/]NAME=EXERCISE:SIDE` (SIDE `left`, `right` or `analytics`); EXERCISE may be
    /// `@FILE`, an exercise file (``ExerciseFile``) with changed thresholds.
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
        let exercise: Exercise
        if analysis[0].hasPrefix("@") {
            exercise = try ExerciseFile.load(String(analysis[0].dropFirst()))
        } else {
            guard !analysis[0].contains(":") else {
                throw CLIError.usage("invalid --session \(text.quotedExcerpt()): \(expected)")
            }
            guard let named = Exercise.named(analysis[0]) else {
                throw CLIError.usage(
                    "unknown exercise \(analysis[0].quotedExcerpt()) in --session \(text.quotedExcerpt()); valid exercises: "
                        + Exercise.catalog.map(\.id).joined(separator: ", "))
            }
            exercise = named
        }
        if analysis[1] == Self.analyticsKeyword {
            self.init(camera: camera, name: name, exercise: exercise, analysis: .analytics)
            return
        }
        guard let side = BodySide(rawValue: analysis[1]) else {
            throw CLIError.usage(
                "unknown side \(analysis[1].quotedExcerpt()) in --session \(text.quotedExcerpt()); valid sides: "
                    + BodySide.allCases.map(\.rawValue).joined(separator: ", ") + " (or "
                    + Self.analyticsKeyword + " for both sides' analytics)")
        }
        self.init(camera: camera, name: name, exercise: exercise, side: side)
    }
}

/// When a worker publishes a session's snapshot: after the first pose, whenever the rep counts
/// change, and otherwise at most `rate` times a second of pose time. A pure function of the
/// pose sequence, so the same poses give the same snapshots. `Codable` for a session's
/// checkpoint: it encodes its interval and what it last published, every double bit for bit
/// through `CheckpointCodec`.
struct SnapshotThrottle: Sendable, Hashable, Codable {
    /// The rep counts of a published snapshot: clean, rejected.
    private struct Counts: Sendable, Hashable, Codable {
        var clean: Int
        var rejected: Int
    }

    /// The shortest pose-time interval between two snapshots without a count change.
    let interval: Double
    private var lastTime: Double?
    private var lastCounts: Counts?

    /// Rounding slack, so that frames exactly `interval` apart (60 fps at 15 Hz: every fourth)
    /// are not skipped for a last-bit difference.
    static let tolerance = 1e-6

    init(rate: Double) {
        interval = 1 / rate
    }

    /// Whether to publish the snapshot taken after the pose at `time`; records it if so.
    mutating func shouldPublish(_ snapshot: MotionSnapshot, at time: Double) -> Bool {
        let counts = Counts(clean: snapshot.repCount, rejected: snapshot.rejectedCount)
        let changed = lastCounts.map { $0 != counts } ?? true
        let due = lastTime.map { time - $0 >= interval - Self.tolerance || time < $0 } ?? true
        guard changed || due else { return false }
        lastTime = time
        lastCounts = counts
        return true
    }
}
