/// An exercise: what to measure, how a rep or hold is judged, and which form rules apply.
///
/// An exercise is a value: a therapist can change its thresholds.
///
/// ```swift
/// var exercise = Exercise.shoulderFlexion
/// exercise.kind = .reps(start: 30, end: 20, minPeak: 90)   // ask for more range
/// let session = MotionSession(exercise: exercise, side: .left)
/// ```
public struct Exercise: Sendable, Hashable, Identifiable {
    /// Where the camera must see the patient from.
    public enum View: String, Sendable, Hashable, Codable {
        /// The sagittal plane: the patient stands sideways to the camera.
        case side
        /// The frontal plane: the patient faces the camera.
        case front
        /// Either works (no orientation check).
        case sideOrFront
    }

    /// How the exercise is counted.
    public enum Kind: Sendable, Hashable {
        /// Repetitions: a rep starts when the smoothed value rises to `start`, ends when it
        /// falls back to `end`, and counts only if its peak reaches `minPeak` (degrees).
        case reps(start: Double, end: Double, minPeak: Double)
        /// A hold: the value reaching `threshold` degrees starts the clock, and the hold
        /// completes after `seconds`. Falling below `threshold` minus
        /// ``SessionRules/holdBreakMargin`` for ``SessionRules/holdBreakTime`` breaks it.
        case hold(threshold: Double, seconds: Double)
    }

    /// The stable identifier, e.g. `"shoulderFlexion"`.
    public var id: String
    /// Where the camera must see the patient from.
    public var view: View
    /// The primary measure (range of motion).
    public var measure: Measure
    /// Reps or hold, with thresholds.
    public var kind: Kind
    /// The form rules checked while a rep or hold is under way.
    public var formRules: [FormRule]
    /// Timing, smoothing and placement rules of the session (defaults from `CATALOG.md`).
    public var sessionRules: SessionRules

    /// Creates an exercise.
    public init(
        id: String, view: View, measure: Measure, kind: Kind, formRules: [FormRule],
        sessionRules: SessionRules = SessionRules()
    ) {
        self.id = id
        self.view = view
        self.measure = measure
        self.kind = kind
        self.formRules = formRules
        self.sessionRules = sessionRules
    }

    /// The joints the exercise needs on `side` (its measure and its form rules), in ``Joint``
    /// order, without repeats.
    public func requiredJoints(side: BodySide) -> [Joint] {
        var joints = Set(measure.joints(side: side))
        for rule in formRules { joints.formUnion(rule.measure.joints(side: side)) }
        return joints.sorted { $0.index < $1.index }
    }
}

/// A form rule: the fault raised when a measure goes above a limit (for drift measures,
/// when it changes by more than the limit since the rep started).
public struct FormRule: Sendable, Hashable {
    /// The correction the rule asks for.
    public var fault: FormFeedback
    /// The measure the rule watches.
    public var measure: Measure
    /// The limit in degrees; the rule is broken above it.
    public var limit: Double

    /// Creates a form rule.
    public init(_ fault: FormFeedback, _ measure: Measure, above limit: Double) {
        self.fault = fault
        self.measure = measure
        self.limit = limit
    }
}

/// The session's rules of time, smoothing and placement. Defaults follow `CATALOG.md`.
public struct SessionRules: Sendable, Hashable {
    /// One Euro filter: minimum cutoff frequency in Hz.
    public var smoothingMinCutoff: Double = 1.0
    /// One Euro filter: speed coefficient.
    public var smoothingBeta: Double = 0.02
    /// One Euro filter: cutoff for the derivative, in Hz.
    public var smoothingDerivativeCutoff: Double = 1.0
    /// A gap between measured poses longer than this (seconds) resets the filter.
    public var smoothingResetGap: Double = 0.5
    /// A raw value moving faster than this (degrees per second) is an outlier.
    public var maximumSpeed: Double = 1500
    /// Outliers are held out for up to this long (seconds), then accepted.
    public var outlierHoldOut: Double = 0.2
    /// Shortest valid rep (seconds).
    public var minimumRepDuration: Double = 0.5
    /// Longest valid rep (seconds).
    public var maximumRepDuration: Double = 30
    /// Measured joints gone for longer than this (seconds) abandon the rep.
    public var abandonAfterMissing: Double = 1.0
    /// A rule broken continuously for this long (seconds) is a fault.
    public var faultPersistence: Double = 0.25
    /// Holds: falling below threshold minus this margin (degrees)...
    public var holdBreakMargin: Double = 5
    /// ...for this long (seconds) breaks the hold.
    public var holdBreakTime: Double = 0.3
    /// Visibility changes are emitted after holding this long (seconds).
    public var visibilityDebounce: Double = 0.3
    /// Setup issue changes are emitted after holding this long (seconds).
    public var setupDebounce: Double = 0.5
    /// Too far: visible body under this fraction of the image height.
    public var tooFarFraction: Double = 0.25
    /// Too close or out of frame: a required joint within this fraction of an edge.
    public var edgeMarginFraction: Double = 0.02
    /// Side view: shoulder width / torso length above this means the patient faces the camera.
    public var sideViewMaximumRatio: Double = 0.45
    /// Front view: shoulder width / torso length below this means the patient is sideways.
    public var frontViewMinimumRatio: Double = 0.3
    /// Low confidence: mean confidence of the required joints under this.
    public var minimumMeanConfidence: Double = 0.5
    /// Reps (or holds) a baseline takes by default.
    public var baselineReps: Int = 3
    /// A pose more than this many seconds after the last accepted one is suspect: it is held
    /// until the next pose says whether time really jumped (the next pose is later still: a gap,
    /// and the held pose is analysed) or the held pose was an outlier (the next pose is earlier:
    /// it is dropped as ``PoseRejections/Reason/timestampOutlier``).
    ///
    /// Not in `CATALOG.md`: a rule against bad input, not a clinical one. Why 2 s: the longer
    /// an outlier ahead of time that is accepted at once, the longer the stream after it is
    /// dropped as going back (at most this long); a real gap of more than
    /// ``abandonAfterMissing`` has ended what was under way anyway, so holding its first pose
    /// for one pose costs nothing but that pose's events coming with the next pose.
    public var suspectTimeJump: Double = 2

    /// The catalog's defaults.
    public init() {}
}
