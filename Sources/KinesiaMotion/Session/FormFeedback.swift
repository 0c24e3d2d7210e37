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
