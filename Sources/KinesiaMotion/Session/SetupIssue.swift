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
