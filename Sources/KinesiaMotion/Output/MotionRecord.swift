/// One decoded line of ``MotionJSON``.
public enum MotionRecord: Sendable, Hashable {
    /// An event and the pose timestamp at which it happened.
    case event(t: Double, MotionEvent)
    /// The snapshot after the pose at `t`.
    case snapshot(t: Double, MotionSnapshot)
    /// The primary measure at one pose.
    case frame(MotionFrame)
    /// The end-of-analysis summary.
    case summary(MotionSummary)
}
