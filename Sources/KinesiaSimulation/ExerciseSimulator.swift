import Foundation
public import KinesiaMotion

/// A built-in simulator of every catalog exercise: poses of a plausible body doing realistic
/// reps or holds, with detector noise, dropouts and form faults, and the truth of what it did.
///
/// The simulator draws a stick figure with realistic proportions, placed for the exercise's
/// view (sideways for `side` exercises, facing the camera for `front` ones), tall in the image
/// and away from its edges. Each block of reps starts quietly at rest (long enough to arm a
/// session and settle visibility); each rep rises with a raised-cosine profile to a peak well
/// above the minimum, pauses, and returns below the end level; holds last their time plus a
/// margin, with one shorter hold given up. Seeded choices put a form fault into some reps: the
/// rule's measure goes clearly beyond its limit for 0.6 seconds mid-rep.
///
/// Everything is deterministic: the same exercise and options give the same poses, byte for
/// byte, on every machine.
///
/// ```swift
/// let simulator = try ExerciseSimulator(exercise: .shoulderAbduction,
///                                       options: SimulationOptions(seed: 7, sides: .alternating))
/// let simulation = simulator.run()
/// var analyzer = MotionAnalyzer(exercise: .shoulderAbduction, side: .left)
/// for pose in simulation.poses { _ = analyzer.process(pose) }
/// analyzer.snapshot.repCount == simulation.truth.cleanCount(side: .left)   // true
/// ```
public struct ExerciseSimulator: Sendable {
    /// The exercise simulated.
    public let exercise: Exercise
    /// The options asked for.
    public let options: SimulationOptions
    let model: SimulationModel
    /// The plan of the first block, made once.
    let firstScript: SimulationScript

    /// Creates a simulator.
    /// - Parameters:
    ///   - exercise: A catalog exercise (identified by its `id`; its thresholds and form rules
    ///     may be changed, the simulation follows them).
    ///   - options: Seed, frame rate, image size, reps, sides, noise...
    /// - Throws: ``SimulationError`` when the exercise is not in the catalog or an option is out
    ///   of range.
    public init(exercise: Exercise, options: SimulationOptions = SimulationOptions()) throws(SimulationError)
    {
        guard let motion = try ExerciseMotion(exercise: exercise) else {
            throw .unsupportedExercise(exercise.id, valid: Exercise.catalog.map(\.id))
        }
        try Self.validate(options)
        self.exercise = exercise
        self.options = options
        model = SimulationModel(motion: motion, options: options)
        firstScript = model.plan(block: 0, start: options.startTime)
    }

    /// Creates a simulator of the catalog exercise `id`.
    /// - Throws: ``SimulationError/unsupportedExercise(_:valid:)`` for an unknown identifier.
    public init(exerciseID id: String, options: SimulationOptions = SimulationOptions())
        throws(SimulationError)
    {
        guard let exercise = Exercise.named(id) else {
            throw .unsupportedExercise(id, valid: Exercise.catalog.map(\.id))
        }
        try self.init(exercise: exercise, options: options)
    }

    private static func validate(_ options: SimulationOptions) throws(SimulationError) {
        func check(_ ok: Bool, _ name: String, _ value: String, _ expected: String) throws(SimulationError) {
            if !ok { throw .invalidOption(name: name, value: value, expected: expected) }
        }
        let fps = options.frameRate
        // Under 5 poses a second a session cannot judge reps reliably, and the truth would not hold.
        try check(fps.isFinite && fps >= 5 && fps <= 1000, "fps", "\(fps)", "5...1000 poses a second")
        let width = Double(options.imageSize.width)
        let height = Double(options.imageSize.height)
        try check(
            width.isFinite && height.isFinite && width >= 64 && height >= 64 && width <= 100_000
                && height <= 100_000, "size", "\(width)x\(height)", "64...100000 pixels a side")
        try check(options.reps >= 1 && options.reps <= 10_000, "reps", "\(options.reps)", "1...10000")
        try check(
            options.noise.isFinite && options.noise >= 0 && options.noise <= 20, "noise", "\(options.noise)",
            "0...20 pixels")
        try check(
            options.faultRate.isFinite && options.faultRate >= 0 && options.faultRate <= 1, "faults",
            "\(options.faultRate)", "a fraction 0...1")
        try check(
            options.startTime.isFinite && abs(options.startTime) < 1e9, "start", "\(options.startTime)",
            "a finite time in seconds")
    }

    /// The sides that move (`squat` and `wallSit` always move both, `together`).
    public var sides: SimulatedSides { model.sides }

    /// Side views: `+1` when the patient faces the image's right (right side nearer the camera),
    /// `-1` when facing left.
    public var facing: Int { model.facing > 0 ? 1 : -1 }

    /// What the first block (the one ``run()`` returns) contains, without making its poses.
    public var truth: SimulationTruth {
        makeTruth(firstScript)
    }

    /// How many poses the first block has (the count of ``run()``'s poses), without making them.
    public var poseCount: Int {
        let start = options.startTime
        let fps = options.frameRate
        // Timestamps are `start + n / fps`, as the stream makes them; the block ends before `end`.
        var count = max(0, Int(((firstScript.end - start) * fps).rounded(.up)))
        while count > 0, start + Double(count - 1) / fps >= firstScript.end { count -= 1 }
        while start + Double(count) / fps < firstScript.end { count += 1 }
        return count
    }

    func makeTruth(_ script: SimulationScript) -> SimulationTruth {
        SimulationTruth(
            exerciseID: exercise.id, seed: options.seed, startTime: script.start, endTime: script.end,
            sides: model.sides, facing: facing, reps: model.truth(of: script))
    }

    /// One block of reps as poses, with its truth.
    public func run() -> Simulation {
        var stream = poses()
        var poses: [Pose] = []
        while let pose = stream.next() { poses.append(pose) }
        return Simulation(poses: poses, truth: stream.truth)
    }

    /// One block of reps, made lazily (the poses of ``run()``, one at a time).
    public func poses() -> SimulationStream {
        SimulationStream(model: model, simulator: self, script: firstScript, endless: false)
    }

    /// An endless stream: block after block of reps, each with its own seeded durations,
    /// peaks and faults, timestamps running on. Nothing is stored: memory stays flat however
    /// long it runs. Its first block is the one ``run()`` returns.
    public func endless() -> SimulationStream {
        SimulationStream(model: model, simulator: self, script: firstScript, endless: true)
    }

    /// The noise-free value the simulator gave `measure` on `side` at `time` (in the block that
    /// contains `time`), for the measures it drives: the primary measure and those of the form
    /// rules. `nil` for other measures, and before the start.
    ///
    /// For drift measures (``Measure/upperArmDrift``, ``Measure/thighDrift``) this is the
    /// measure's value, not its change since a rep started.
    public func intendedValue(of measure: Measure, side: BodySide, at time: Double) -> Double? {
        guard time >= options.startTime, time.isFinite else { return nil }
        var script = firstScript
        while time >= script.end {
            script = model.plan(block: script.index + 1, start: script.end)
        }
        return model.motion.intendedValue(of: measure, side: side, in: model.state(at: time, in: script))
    }
}

/// One block of simulated poses and what it contains.
public struct Simulation: Sendable {
    /// The poses, in capture order, one per frame.
    public var poses: [Pose]
    /// What the poses contain: every rep and hold, with its expected outcome.
    public var truth: SimulationTruth

    /// Creates a simulation.
    public init(poses: [Pose], truth: SimulationTruth) {
        self.poses = poses
        self.truth = truth
    }
}
