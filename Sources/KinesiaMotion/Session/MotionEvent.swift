/// Something that happened in a session, for reacting (voice, haptics, analytics).
public enum MotionEvent: Sendable, Hashable {
    /// A clean rep (or hold) finished.
    case repCompleted(Rep)
    /// A rep (or hold) finished with poor form; `rep.faults` says why.
    case repRejected(Rep)
    /// Holds: the value crossed the threshold and the clock started.
    case holdStarted
    /// A rule was broken for about 0.25 s; once per rep and fault.
    case formFault(FormFeedback)
    /// The required joints came into view or left it (debounced).
    case visibilityChanged(Visibility)
    /// The placement problems changed (debounced).
    case setupChanged(Set<SetupIssue>)
    /// The baseline measurement finished, with its value in degrees.
    case baselineCompleted(Double)

    /// The case's stable name: `"repCompleted"`, `"formFault"`, ... (the JSON `"type"`).
    public var name: String {
        switch self {
        case .repCompleted: "repCompleted"
        case .repRejected: "repRejected"
        case .holdStarted: "holdStarted"
        case .formFault: "formFault"
        case .visibilityChanged: "visibilityChanged"
        case .setupChanged: "setupChanged"
        case .baselineCompleted: "baselineCompleted"
        }
    }
}
