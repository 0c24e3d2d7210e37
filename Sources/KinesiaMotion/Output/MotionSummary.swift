/// What a whole analysis came to: the last line of `kinesia analyze --format json`.
///
/// ```json
/// {"type":"summary","repCount":3,"rejectedCount":1,"best":121.5,"reps":[{"peak":..., ...}]}
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

    /// Creates a summary.
    public init(repCount: Int, rejectedCount: Int, best: Double, reps: [Rep]) {
        self.repCount = repCount
        self.rejectedCount = rejectedCount
        self.best = best
        self.reps = reps
    }
}
