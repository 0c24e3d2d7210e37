/// A form correction. The SDK ships no texts: raw values are stable, for your app to translate.
///
/// ```swift
/// func text(for fault: FormFeedback?) -> String {
///     switch fault {
///     case .keepUpperArmStill:  "Keep your upper arm by your side"
///     case .keepThighStill:     "Keep your thigh still"
///     case .keepElbowStraight:  "Straighten your elbow"
///     case .keepTrunkUpright:   "Keep your trunk upright"
///     case .keepShouldersLevel: "Level your shoulders"
///     case .keepKneeStraight:   "Straighten your knee"
///     case .keepHipsLevel:      "Level your hips"
///     case nil:                 "Watch your form"
///     }
/// }
/// ```
///
/// Which exercise checks which fault, and its limit, is in each ``Exercise``'s
/// ``Exercise/formRules``.
public enum FormFeedback: String, CaseIterable, Sendable, Hashable, Codable {
    /// The upper arm moved away from where it was when the rep started (elbow curls).
    case keepUpperArmStill
    /// The thigh moved away from where it was when the rep started (knee curls and extensions).
    case keepThighStill
    /// The elbow bent while the arm was raised (shoulder flexion and abduction).
    case keepElbowStraight
    /// The trunk leaned away from vertical.
    case keepTrunkUpright
    /// The line of the shoulders tilted from horizontal (shoulder abduction).
    case keepShouldersLevel
    /// The knee of the moving leg bent (hip abduction).
    case keepKneeStraight
    /// The line of the hips tilted from horizontal (hip abduction).
    case keepHipsLevel
}

/// A placement problem of the patient in front of the camera. Raw values are stable; the SDK
/// ships no texts.
///
/// ```swift
/// case .setupChanged(let issues):
///     if let issue = issues.first { voice.say(text(for: issue)) }
/// ```
public enum SetupIssue: String, CaseIterable, Sendable, Hashable, Codable {
    /// The visible body spans under 25% of the image height: come closer.
    case tooFar
    /// A required joint is within 2% of an image edge: step back or move into the frame.
    case tooClose
    /// A side-view exercise sees the patient from the front: turn sideways.
    case turnSideways
    /// A front-view exercise sees the patient from the side: face the camera.
    case faceCamera
    /// The required joints' mean confidence is under 0.5: more light, less clutter.
    case lowConfidence
}

/// Whether the joints an exercise needs are in view, and which are missing.
public struct Visibility: Sendable, Hashable, Codable {
    /// `true` when every required joint is in view.
    public var isVisible: Bool
    /// The required joints that are not in view, in ``Joint`` order.
    public var missingJoints: [Joint]

    /// Creates a visibility value.
    public init(isVisible: Bool, missingJoints: [Joint]) {
        self.isVisible = isVisible
        self.missingJoints = missingJoints
    }
}

/// Progress of a baseline measurement started with ``MotionSession/startBaseline(reps:)``.
public struct BaselineProgress: Sendable, Hashable, Codable {
    /// Clean reps (or holds) measured so far.
    public var completed: Int
    /// Clean reps (or holds) the baseline needs.
    public var target: Int
    /// The highest peak among the clean reps so far; the baseline once complete.
    public var value: Double?

    /// Whether the baseline has all its reps.
    public var isComplete: Bool { completed >= target }

    /// Creates a progress value.
    public init(completed: Int, target: Int, value: Double?) {
        self.completed = completed
        self.target = target
        self.value = value
    }
}

/// One judged repetition (or hold).
public struct Rep: Sendable, Hashable, Codable {
    /// The highest smoothed value of the primary measure during the rep, in degrees.
    public var peak: Double
    /// The form faults that occurred during the rep, in the order they occurred; empty when clean.
    public var faults: [FormFeedback]
    /// Pose timestamp at which the rep started.
    public var start: Double
    /// Pose timestamp at which the rep ended.
    public var end: Double

    /// Whether the rep had no fault.
    public var isClean: Bool { faults.isEmpty }
    /// How long the rep lasted, in seconds.
    public var duration: Double { end - start }

    /// Creates a rep.
    public init(peak: Double, faults: [FormFeedback], start: Double, end: Double) {
        self.peak = peak
        self.faults = faults
        self.start = start
        self.end = end
    }
}

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
