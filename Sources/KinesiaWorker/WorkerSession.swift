import KinesiaJournal
public import KinesiaMotion
import KinesiaWire

/// One session a worker hosts, as `--session [CAMERA/]NAME=EXERCISE:SIDE` gives it
/// (`EXERCISE:analytics` for both sides' analytics); `kinesia` parses the flag
/// (`WorkerSession(parsing:defaultCamera:)`).
///
/// ```swift
/// let session = WorkerSession(camera: "cam0", name: "left", exercise: .shoulderAbduction, side: .left)
/// session.identity   // "shoulderAbduction:left"
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
    /// The run the coordinator gave the session (`nil`: a session of `--session`, no run):
    /// part of its ``identity``, so that a new run is a new stream of events.
    public var run: UInt64?
    /// The clean reps of the baseline measurement the run begins with (`nil`: none): started
    /// before the first pose is analysed, so that a rebuild begins it at the same pose.
    public var baselineReps: Int?

    /// A fresh analysis of the session's side, its baseline begun when the run has one.
    public func makeAnalyzer() -> MotionAnalyzer {
        var analyzer = MotionAnalyzer(exercise: exercise, side: side ?? .left)
        if let baselineReps, analysis != .analytics { analyzer.startBaseline(reps: baselineReps) }
        return analyzer
    }

    /// What the JSON of each of the run's events and snapshots ends with instead of its `}`:
    /// `,"run":"7"}` (empty for a session without a run: its JSON is `kinesia analyze`'s).
    var runSuffix: [UInt8] {
        guard let run else { return [] }
        return Array(",\"run\":\"\(run)\"}".utf8)
    }

    /// The side of a one-side session; `nil` for analytics.
    public var side: BodySide? {
        if case .side(let side) = analysis { side } else { nil }
    }

    /// Makes a one-side session.
    public init(camera: String, name: String, exercise: Exercise, side: BodySide) {
        self.init(camera: camera, name: name, exercise: exercise, analysis: .side(side))
    }

    /// Makes a session.
    public init(
        camera: String, name: String, exercise: Exercise, analysis: Analysis, run: UInt64? = nil,
        baselineReps: Int? = nil
    ) {
        self.camera = camera
        self.name = name
        self.exercise = exercise
        self.analysis = analysis
        self.run = run
        self.baselineReps = baselineReps
    }

    /// `EXERCISE:SIDE` or `EXERCISE:analytics`, as given.
    public var analysisText: String {
        switch analysis {
        case .side(let side): "\(exercise.id):\(side.rawValue)"
        case .analytics: "\(exercise.id):\(Self.analyticsKeyword)"
        }
    }

    /// What makes two runs of a session with `exercise` the same (a stream identity's
    /// `session`): the catalog id, and a checksum of the thresholds when they differ from it.
    public static func identity(of exercise: Exercise) -> String {
        guard Exercise.named(exercise.id) != exercise else { return exercise.id }
        let crc = CRC32C.checksum(Array(String(describing: exercise).utf8))
        return exercise.id + "(thresholds " + String(crc, radix: 16) + ")"
    }

    /// What makes two runs of the session the same session (its stream identity's `session`):
    /// the exercise (with any changed thresholds) and the side, or `analytics`, and the
    /// coordinator's run when it gave one (`squat:left run 7`).
    public var identity: String {
        let base =
            switch analysis {
            case .side(let side): "\(Self.identity(of: exercise)):\(side.rawValue)"
            case .analytics: "\(Self.identity(of: exercise)):\(Self.analyticsKeyword)"
            }
        return run.map { "\(base) run \($0)" } ?? base
    }
}
