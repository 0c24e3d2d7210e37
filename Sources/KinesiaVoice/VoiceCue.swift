public import KinesiaMotion

/// What a cue is about: one entry of a texts file.
///
/// Every case has a text in every language (a test iterates them all). The order of
/// ``priority`` is the order in which waiting cues are spoken: setup before form before counts.
public enum VoiceCueSubject: Hashable, Sendable {
    /// A clean rep: counts it aloud (`{count}`, `{peak}`).
    case repCounted
    /// A rejected rep: says why (`{fault}`, `{peak}`).
    case repRejected
    /// A hold started.
    case holdStarted
    /// A clean hold completed (`{seconds}`, `{count}`, `{peak}`).
    case holdCompleted
    /// A hold completed with poor form (`{fault}`, `{seconds}`).
    case holdRejected
    /// A live form correction.
    case formFault(FormFeedback)
    /// The required joints left the view (`{joints}` names the missing ones).
    case visibilityLost
    /// The required joints are in view for the first time: the greeting (`"I can see you"`).
    case visibilityGained
    /// The required joints are in view again, after they left it.
    case visibilityRegained
    /// The most important placement problem of the new set.
    case setupIssue(SetupIssue)
    /// The placement problems are gone.
    case setupFixed
    /// The baseline measurement finished (`{degrees}`).
    case baselineCompleted

    /// The rank of a cue: waiting cues are spoken setup first, then form, then progress.
    public var priority: VoiceCuePriority {
        switch self {
        case .visibilityLost, .visibilityGained, .visibilityRegained, .setupIssue, .setupFixed: .setup
        case .formFault, .repRejected, .holdRejected: .form
        case .repCounted, .holdStarted, .holdCompleted, .baselineCompleted: .progress
        }
    }

    /// Cues that replace each other while they wait: a newer one of the same group and session
    /// makes the older one pointless (`"I can see you again"` after `"I can't see your knee"`,
    /// `"4"` after `"3"`). `nil`: never replaced.
    var supersedingGroup: Int? {
        switch self {
        case .visibilityLost, .visibilityGained, .visibilityRegained: 0
        case .setupIssue, .setupFixed: 1
        case .repCounted, .holdCompleted: 2
        case .holdStarted: 3
        case .formFault, .repRejected, .holdRejected, .baselineCompleted: nil
        }
    }
}

/// The rank of a cue, most urgent first: placement problems make every other cue pointless,
/// form comes before counting.
public enum VoiceCuePriority: Int, Comparable, CaseIterable, Sendable, Hashable {
    /// Visibility and placement.
    case setup = 0
    /// Form faults and rejected reps.
    case form = 1
    /// Counts, holds and the baseline.
    case progress = 2

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One thing to say: its text in the chosen language, what it is about, the session it came
/// from and when it was received (in the planner's time: the events' pose timestamps).
public struct VoiceCue: Hashable, Sendable {
    /// What it is about.
    public var subject: VoiceCueSubject
    /// The text to speak, placeholders filled.
    public var text: String
    /// The session it came from (`left`...).
    public var session: String
    /// When it was received, in seconds of the planner's time.
    public var receivedAt: Double

    /// Makes a cue.
    public init(subject: VoiceCueSubject, text: String, session: String, receivedAt: Double) {
        self.subject = subject
        self.text = text
        self.session = session
        self.receivedAt = receivedAt
    }

    /// The cue's rank.
    public var priority: VoiceCuePriority { subject.priority }
}

extension VoiceCueSubject: CustomStringConvertible {
    /// A stable name: `repCounted`, `formFault.keepTrunkUpright`, `setupIssue.tooFar`...
    public var description: String {
        switch self {
        case .repCounted: "repCounted"
        case .repRejected: "repRejected"
        case .holdStarted: "holdStarted"
        case .holdCompleted: "holdCompleted"
        case .holdRejected: "holdRejected"
        case .formFault(let fault): "formFault.\(fault.rawValue)"
        case .visibilityLost: "visibilityLost"
        case .visibilityGained: "visibilityGained"
        case .visibilityRegained: "visibilityRegained"
        case .setupIssue(let issue): "setupIssue.\(issue.rawValue)"
        case .setupFixed: "setupFixed"
        case .baselineCompleted: "baselineCompleted"
        }
    }
}
