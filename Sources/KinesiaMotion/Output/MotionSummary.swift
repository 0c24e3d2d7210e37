/// What a whole analysis came to: the last line of `kinesia analyze --format json`.
///
/// ```json
/// {"type":"summary","repCount":3,"rejectedCount":1,"best":121.5,"reps":[{"peak":..., ...}],
///  "rejectedPoses":{"total":1,"nonFinite":0,"timestampNotIncreasing":0,"absurdCoordinates":0,
///  "absurdTimestamp":0,"timestampOutlier":1}}
/// ```
public struct MotionSummary: Sendable, Hashable {
    /// Clean reps (or holds).
    public var repCount: Int
    /// Rejected reps (or holds).
    public var rejectedCount: Int
    /// The highest smoothed value of the primary measure, in degrees.
    public var best: Double
    /// Every judged rep, clean and rejected, in the order they ended.
    public var reps: [Rep]
    /// The poses the analysis dropped as bad input, by reason (``MotionAnalyzer/rejectedPoses``):
    /// what the reps were not counted from.
    public var rejectedPoses: PoseRejections

    /// Creates a summary.
    public init(
        repCount: Int, rejectedCount: Int, best: Double, reps: [Rep],
        rejectedPoses: PoseRejections = PoseRejections()
    ) {
        self.repCount = repCount
        self.rejectedCount = rejectedCount
        self.best = best
        self.reps = reps
        self.rejectedPoses = rejectedPoses
    }
}
