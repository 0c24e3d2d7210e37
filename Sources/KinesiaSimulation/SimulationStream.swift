public import Foundation
public import KinesiaMotion

/// Simulated poses made one at a time: one block of reps, or an endless run of blocks.
///
/// Nothing is stored beyond the plan of the current block, so an endless stream runs in flat
/// memory (for load tests: `kinesia ingest --source sim:squat --loop`).
///
/// ```swift
/// var stream = try ExerciseSimulator(exerciseID: "squat").endless()
/// for _ in 0..<1_000_000 {
///     let pose = stream.next()!   // an endless stream never ends
///     send(pose)
/// }
/// ```
public struct SimulationStream: IteratorProtocol, Sequence, Sendable {
    /// The simulator making the poses.
    public let simulator: ExerciseSimulator
    /// Whether blocks of reps follow one another forever.
    public let isEndless: Bool
    /// What the current block contains (the one the last pose belongs to).
    public private(set) var truth: SimulationTruth
    /// How many poses were made so far.
    public private(set) var count = 0

    private let model: SimulationModel
    private var script: SimulationScript
    private var noise: SimulationRandom
    private var dropouts: SimulationRandom
    private var jitter: SimulationRandom
    private var droppedJoint = -1
    private var droppedFrames = 0
    private var quietUntil = -Double.infinity
    private let width: Double
    private static let joints = Joint.allCases
    private let height: Double

    init(model: SimulationModel, simulator: ExerciseSimulator, script: SimulationScript, endless: Bool) {
        self.model = model
        self.simulator = simulator
        isEndless = endless
        self.script = script
        truth = simulator.makeTruth(script)
        noise = model.random(.noise)
        dropouts = model.random(.dropouts)
        jitter = model.random(.jitter)
        width = Double(model.options.imageSize.width)
        height = Double(model.options.imageSize.height)
    }

    /// The timestamp of the next pose.
    public var nextTimestamp: TimeInterval {
        model.options.startTime + Double(count) / model.options.frameRate
    }

    /// The noise-free value the simulator gave `measure` on `side` at `time`, when `time` is in
    /// the current block (see ``ExerciseSimulator/intendedValue(of:side:at:)``); `nil` otherwise.
    public func intendedValue(of measure: Measure, side: BodySide, at time: Double) -> Double? {
        guard time >= script.start, time < script.end else { return nil }
        return model.motion.intendedValue(of: measure, side: side, in: model.state(at: time, in: script))
    }

    /// The next pose; `nil` at the end of a single block (never for an endless stream).
    public mutating func next() -> Pose? {
        let time = nextTimestamp
        while time >= script.end {
            guard isEndless else { return nil }
            let block = script.index + 1
            script = model.plan(block: block, start: script.end)
            truth = simulator.makeTruth(script)
            noise = model.random(.noise, block: block)
            dropouts = model.random(.dropouts, block: block)
            jitter = model.random(.jitter, block: block)
            droppedFrames = 0
            droppedJoint = -1
            quietUntil = -.infinity
        }
        count += 1
        return render(at: time)
    }

    private mutating func render(at time: Double) -> Pose {
        let options = model.options
        let points = model.pixels(model.state(at: time, in: script))

        // A joint goes missing now and then, for one to three frames.
        let starts = dropouts.chance(0.4 / options.frameRate)
        let joint = model.visibleIndices[dropouts.integer(in: 0...(model.visibleIndices.count - 1))]
        // One to three frames, and never 0.3 s (a session's visibility debounce) or more.
        let frames = Swift.min(dropouts.integer(in: 1...3), Int(0.25 * options.frameRate))
        if droppedFrames > 0 {
            droppedFrames -= 1
        } else {
            if droppedJoint >= 0 {
                // A dropout just ended: the next one waits, so two never join into a long one.
                droppedJoint = -1
                quietUntil = time + 0.5
            }
            if options.dropouts, starts, frames >= 1, time >= quietUntil, script.allowsDropout(at: time) {
                droppedJoint = joint
                droppedFrames = frames - 1
            }
        }

        var pointsByJoint: [Joint: CGPoint] = [:]
        var confidence: [Joint: Double] = [:]
        pointsByJoint.reserveCapacity(model.visibleIndices.count)
        confidence.reserveCapacity(model.visibleIndices.count)
        for index in model.visibleIndices {
            let (dx, dy) = noise.gaussianPair(deviation: options.noise)
            let shake = jitter.uniform(in: -0.04...0.04)
            guard index != droppedJoint else { continue }
            let joint = Self.joints[index]
            let x = Swift.min(width - 0.5, Swift.max(0.5, points[index].x + dx))
            let y = Swift.min(height - 0.5, Swift.max(0.5, points[index].y + dy))
            pointsByJoint[joint] = CGPoint(x: x, y: y)
            confidence[joint] = Swift.min(1, Swift.max(0.05, model.confidence[index] + shake))
        }
        return Pose(
            points: pointsByJoint, timestamp: time, imageSize: options.imageSize, confidence: confidence)
    }
}
