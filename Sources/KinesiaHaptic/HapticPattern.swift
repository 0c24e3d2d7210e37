/// A vibration pattern: pulses and pauses, played in order.
///
/// ```swift
/// let double = HapticPattern(steps: [.pulse(milliseconds: 90, intensity: 80), .pause(milliseconds: 110),
///                                    .pulse(milliseconds: 90, intensity: 80)])
/// double.duration  // 0.29 s
/// ```
public struct HapticPattern: Hashable, Sendable {
    /// One step of a pattern.
    public enum Step: Hashable, Sendable {
        /// Vibrate for `milliseconds` at `intensity` percent (1...100).
        case pulse(milliseconds: Int, intensity: Int)
        /// Stay still for `milliseconds`.
        case pause(milliseconds: Int)

        /// The step's length in milliseconds.
        public var milliseconds: Int {
            switch self {
            case .pulse(let milliseconds, _), .pause(let milliseconds): milliseconds
            }
        }
    }

    /// The longest step a mapping may hold, in milliseconds (evdev's `replay.length` is 16 bits).
    public static let maximumStepMilliseconds = 10_000

    /// The steps.
    public var steps: [Step]

    /// A pattern.
    public init(steps: [Step]) {
        self.steps = steps
    }

    /// The pattern's length in seconds.
    public var duration: Double { Double(steps.reduce(0) { $0 + $1.milliseconds }) / 1000 }
}
