import KinesiaSimulation
import Testing

@testable import KinesiaMotion

/// A session's snapshot encoder writes exactly what ``MotionJSON`` writes, snapshot after
/// snapshot, whatever it remembers.
struct SnapshotJSONEncoderTests {
    @Test(arguments: Exercise.catalog)
    func everySnapshotOfASimulatedSessionIsWrittenAsMotionJSONWritesIt(exercise: Exercise) throws {
        var options = SimulationOptions(seed: 7)
        options.faultRate = 0.4
        options.noise = 1.5
        let poses = try ExerciseSimulator(exercise: exercise, options: options).run().poses
        var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
        var encoder = SnapshotJSONEncoder()
        var reps = Set<Double>()
        for pose in poses {
            _ = analyzer.process(pose)
            let snapshot = analyzer.snapshot
            if let rep = snapshot.lastRep { reps.insert(rep.end) }
            var bytes: [UInt8] = []
            encoder.encode(snapshot, at: pose.timestamp, into: &bytes)
            let expected = MotionJSON.encode(snapshot, at: pose.timestamp)
            guard String(decoding: bytes, as: UTF8.self) == expected else {
                Issue.record(
                    "\(exercise.id) at t \(pose.timestamp): \(String(decoding: bytes, as: UTF8.self)) != \(expected)"
                )
                return
            }
        }
        if case .reps = exercise.kind { #expect(reps.count > 1, "the last rep changed along the way") }
    }

    @Test func numbersThatCompareEqualButPrintDifferentlyAreWrittenAsTheyAre() {
        var encoder = SnapshotJSONEncoder()
        var snapshot = MotionSnapshot()
        for best in [0.0, -0.0, 0.0, .nan, .infinity, 12.5, 12.5] {
            snapshot.best = best
            snapshot.lastRep = Rep(peak: best, faults: [], start: -0.0, end: 0.0)
            var bytes: [UInt8] = []
            encoder.encode(snapshot, at: 1, into: &bytes)
            #expect(
                String(decoding: bytes, as: UTF8.self) == MotionJSON.encode(snapshot, at: 1), "best \(best)")
        }
    }
}
