import Foundation
import KinesiaMotion
import KinesiaSimulation

/// Shared helpers of the simulation tests.
enum Fixtures {
    /// Options for a test run: a few reps, alternating sides, faults in about half the reps.
    static func options(
        seed: UInt64 = 11, reps: Int = 3, sides: SimulatedSides = .alternating, noise: Double = 1,
        dropouts: Bool = true, faultRate: Double = 0.5, frameRate: Double = 30,
        imageSize: CGSize = CGSize(width: 1280, height: 720)
    ) -> SimulationOptions {
        SimulationOptions(
            seed: seed, frameRate: frameRate, imageSize: imageSize, reps: reps, sides: sides, noise: noise,
            dropouts: dropouts, faultRate: faultRate)
    }

    /// A simulator and its first block.
    static func run(_ exercise: Exercise, _ options: SimulationOptions) throws -> (
        ExerciseSimulator, Simulation
    ) {
        let simulator = try ExerciseSimulator(exercise: exercise, options: options)
        return (simulator, simulator.run())
    }

    /// The poses whose timestamps fall in `from...to`.
    static func poses(_ poses: [Pose], from: Double, to: Double) -> [Pose] {
        poses.filter { $0.timestamp >= from && $0.timestamp <= to }
    }

    /// The value a rule compares with its limit in `pose`: the measure itself, or for drift
    /// measures its change since `reference`.
    static func ruleAmount(_ rule: FormRule, in pose: Pose, side: BodySide, reference: Double?) -> Double? {
        guard let value = rule.measure.value(in: pose, side: side) else { return nil }
        guard rule.measure.isRelativeToRepStart else { return value }
        guard let reference else { return nil }
        return abs(value - reference)
    }

    /// The `fraction` quantile of `values`.
    static func quantile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
}
