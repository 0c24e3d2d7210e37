public import Foundation
import KinesiaMotion

/// Which side of the body moves in a simulation.
public enum SimulatedSides: String, CaseIterable, Sendable, Hashable, Codable {
    /// Only the patient's left limb moves; the right one stays at rest.
    case left
    /// Only the patient's right limb moves; the left one stays at rest.
    case right
    /// Left and right take turns: left, right, left, right...
    case alternating
    /// Both limbs move at the same time (a squat always does).
    case together
}

/// Everything a simulation can be told: seed, frame rate, image size, reps, sides, noise.
///
/// The defaults give a realistic session: 30 poses a second in a 1280x720 image, five reps on
/// each side, left and right alternating, about one pixel of detector noise, occasional dropouts of a joint and a
/// form fault in about a quarter of the reps.
///
/// ```swift
/// var options = SimulationOptions(seed: 7)
/// options.reps = 3
/// options.sides = .alternating
/// let simulation = try ExerciseSimulator(exercise: .squat, options: options).run()
/// ```
public struct SimulationOptions: Sendable, Hashable {
    /// The seed: equal options give equal poses, byte for byte.
    public var seed: UInt64
    /// Poses per second, 5...1000 (timestamps are `startTime + n / frameRate`).
    public var frameRate: Double
    /// The image the points refer to, in pixels (landscape or portrait).
    public var imageSize: CGSize
    /// Reps (or counted holds) per moving side in one block. Holds add one shorter, broken hold
    /// when ``brokenHold`` is set.
    public var reps: Int
    /// Which side moves. Exercises done on both legs at once (`squat`, `wallSit`) always move
    /// both sides.
    public var sides: SimulatedSides
    /// Standard deviation of the pixel noise added to every point (clamped to three deviations).
    /// `0` gives exact geometry.
    public var noise: Double
    /// Whether a joint now and then goes missing for one to three frames (never during an
    /// injected fault, never long enough to abandon a rep).
    public var dropouts: Bool
    /// The fraction of reps (or holds) given a form fault, 0...1 (rounded to whole reps).
    public var faultRate: Double
    /// Holds: add one shorter hold that the patient gives up (it counts as nothing).
    public var brokenHold: Bool
    /// The timestamp of the first pose, in seconds.
    public var startTime: TimeInterval

    /// Creates options; every parameter has a realistic default.
    public init(
        seed: UInt64 = 1, frameRate: Double = 30, imageSize: CGSize = CGSize(width: 1280, height: 720),
        reps: Int = 5, sides: SimulatedSides = .alternating, noise: Double = 1, dropouts: Bool = true,
        faultRate: Double = 0.25, brokenHold: Bool = true, startTime: TimeInterval = 0
    ) {
        self.seed = seed
        self.frameRate = frameRate
        self.imageSize = imageSize
        self.reps = reps
        self.sides = sides
        self.noise = noise
        self.dropouts = dropouts
        self.faultRate = faultRate
        self.brokenHold = brokenHold
        self.startTime = startTime
    }
}
