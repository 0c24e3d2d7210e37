/// Everything a screen needs, in one value: ``MotionSession/snapshot``.
///
/// ```swift
/// let s = session.snapshot
/// Text(s.value.map { "\(Int($0))°" } ?? "—")
/// Text("\(s.repCount) clean · \(s.rejectedCount) rejected")
/// if let progress = s.holdProgress { ProgressView(value: progress) }
/// if !s.isVisible {
///     Text("Show: \(s.missingJoints.map(\.rawValue).joined(separator: ", "))")
/// }
/// ```
public struct MotionSnapshot: Sendable, Hashable {
    /// Current smoothed value of the primary measure, in degrees; `nil` when not measurable.
    public var value: Double?
    /// Highest smoothed value seen since the last reset; 0 until a value is seen.
    public var best: Double = 0
    /// Clean reps.
    public var repCount: Int = 0
    /// Rejected reps.
    public var rejectedCount: Int = 0
    /// The last judged rep (clean or not).
    public var lastRep: Rep?
    /// 0...1 while holding, `nil` otherwise.
    ///
    /// Hold exercises only (`wallSit`...): 0 when a hold starts, then the elapsed fraction of the
    /// hold's duration; 1 from the pose that completes the hold (with its
    /// ``MotionEvent/repCompleted(_:)`` or ``MotionEvent/repRejected(_:)``), and it stays 1 while
    /// the patient is still in the position, so that a progress bar fills. It becomes `nil` when
    /// the patient comes out of the position (the value back at the level that arms the next
    /// hold), when a hold breaks before completing, when the measured joints stay out of view
    /// long enough to abandon it, and on ``MotionAnalyzer/reset()``. Always `nil` for rep
    /// exercises.
    public var holdProgress: Double?
    /// Lowest confidence among the measured joints; `nil` without confidence figures.
    public var confidence: Double?
    /// Placement problems; empty means fine.
    public var setupIssues: Set<SetupIssue> = []
    /// Whether the required joints are in view.
    public var isVisible: Bool = false
    /// The required joints that are missing, in ``Joint`` order.
    public var missingJoints: [Joint] = []
    /// Whether the session is reading poses.
    public var isRunning: Bool = false
    /// Progress of the baseline measurement, if one was started.
    public var baseline: BaselineProgress?

    /// An empty snapshot: nothing measured yet.
    public init() {}
}
