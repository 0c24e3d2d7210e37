import KinesiaMotion

/// What a pattern is played for: one key of the mapping file's `"events"` (every one must be
/// there, mapped to a pattern or to `null`).
public enum HapticTrigger: String, CaseIterable, Sendable, Hashable {
    /// A clean rep.
    case repCompleted
    /// A rejected rep.
    case repRejected
    /// A live form fault.
    case formFault
    /// A hold started.
    case holdStarted
    /// A clean hold completed.
    case holdCompleted
    /// A hold completed with poor form.
    case holdRejected
    /// New placement problems.
    case setupIssue
    /// The placement problems are gone.
    case setupFixed
    /// The required joints left the view.
    case visibilityLost
    /// They are back in view.
    case visibilityRegained
    /// The baseline measurement finished.
    case baselineCompleted

    /// The rank of a trigger when the device is busy: setup first, then form, then progress.
    public var priority: Int {
        switch self {
        case .setupIssue, .setupFixed, .visibilityLost, .visibilityRegained: 0
        case .repRejected, .formFault, .holdRejected: 1
        case .repCompleted, .holdStarted, .holdCompleted, .baselineCompleted: 2
        }
    }
}
