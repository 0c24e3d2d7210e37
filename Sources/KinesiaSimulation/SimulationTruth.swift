public import KinesiaMotion

/// One rep (or hold) the simulator performed on one side, and how the analysis must judge it.
///
/// Times and peak are the intended, noise-free figures: the analysis smooths the value, so its
/// rep starts and ends a little later and its peak is within a few degrees.
public struct SimulatedRep: Sendable, Hashable, Codable {
    /// How the analysis must judge a simulated rep.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Counted as clean: `.repCompleted`.
        case clean
        /// Counted as rejected, with ``SimulatedRep/faults``: `.repRejected`.
        case rejected
        /// Not counted at all (a hold given up before its time).
        case notCounted
    }

    /// The side that moved.
    public var side: BodySide
    /// Whether this is a hold rather than a rep.
    public var isHold: Bool
    /// When the intended value reached the exercise's start level (holds: the threshold).
    public var start: Double
    /// When the intended value fell back to the end level (holds: when the hold completed, or
    /// when the patient gave it up).
    public var end: Double
    /// The highest intended value of the primary measure, in degrees.
    public var peak: Double
    /// The faults injected, in order; empty for a clean rep.
    public var faults: [FormFeedback]
    /// When each injected fault was at full strength (beyond its limit), as `[start, end]`
    /// pairs parallel to ``faults``.
    public var faultTimes: [[Double]]
    /// How the analysis must judge it.
    public var outcome: Outcome

    /// Creates a simulated rep.
    public init(
        side: BodySide, isHold: Bool, start: Double, end: Double, peak: Double, faults: [FormFeedback],
        faultTimes: [[Double]], outcome: Outcome
    ) {
        self.side = side
        self.isHold = isHold
        self.start = start
        self.end = end
        self.peak = peak
        self.faults = faults
        self.faultTimes = faultTimes
        self.outcome = outcome
    }
}

/// What a simulation generated: every rep and hold, side by side, with its expected outcome.
///
/// The truth is a conservative, exact claim about the analysis of the simulated poses: a
/// session on `side` counts exactly ``cleanCount(side:)`` clean and ``rejectedCount(side:)``
/// rejected reps, and the faults of each rejected rep are those listed here.
///
/// ```swift
/// let simulation = try ExerciseSimulator(exercise: .squat, options: options).run()
/// simulation.truth.cleanCount(side: .left)      // e.g. 4
/// simulation.truth.reps(side: .left).map(\.faults)
/// ```
public struct SimulationTruth: Sendable, Hashable, Codable {
    /// The exercise's identifier.
    public var exerciseID: String
    /// The seed of the simulation.
    public var seed: UInt64
    /// The timestamp of the first pose.
    public var startTime: Double
    /// The end of the simulated block (the last pose is just before it).
    public var endTime: Double
    /// The side(s) moving (after exercises done on both legs were made `together`).
    public var sides: SimulatedSides
    /// Which way the patient faces in a side view: `+1` towards the image's right, `-1` left.
    public var facing: Int
    /// Every rep and hold, in time order; a rep done with both sides together appears once per
    /// side.
    public var reps: [SimulatedRep]

    /// Creates a truth.
    public init(
        exerciseID: String, seed: UInt64, startTime: Double, endTime: Double, sides: SimulatedSides,
        facing: Int, reps: [SimulatedRep]
    ) {
        self.exerciseID = exerciseID
        self.seed = seed
        self.startTime = startTime
        self.endTime = endTime
        self.sides = sides
        self.facing = facing
        self.reps = reps
    }

    /// The reps and holds of `side`, in time order.
    public func reps(side: BodySide) -> [SimulatedRep] {
        reps.filter { $0.side == side }
    }

    /// The reps and holds of `side` that must count, in time order (clean and rejected).
    public func countedReps(side: BodySide) -> [SimulatedRep] {
        reps.filter { $0.side == side && $0.outcome != .notCounted }
    }

    /// How many clean reps (or holds) a session on `side` must count.
    public func cleanCount(side: BodySide) -> Int {
        reps.count { $0.side == side && $0.outcome == .clean }
    }

    /// How many rejected reps (or holds) a session on `side` must count.
    public func rejectedCount(side: BodySide) -> Int {
        reps.count { $0.side == side && $0.outcome == .rejected }
    }
}
