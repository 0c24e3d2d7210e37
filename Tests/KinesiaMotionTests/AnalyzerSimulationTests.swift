import KinesiaSimulation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

/// The analyzer against the simulator's truth: generated sessions with pixel noise, dropped
/// joints and injected faults are judged exactly as the simulator intended.
struct AnalyzerSimulationTests {
    @Test(arguments: Exercise.catalog)
    func simulatedSessionsAreJudgedAsIntended(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            for seed in UInt64(1)...4 {
                var options = SimulationOptions(seed: seed)
                options.faultRate = 0.4
                options.noise = 1.5
                let simulation = try ExerciseSimulator(exercise: exercise, options: options).run()
                for side in BodySide.allCases {
                    let (analyzer, events) = analyze(simulation.poses, exercise: exercise, side: side)
                    let truth = simulation.truth
                    let context = "\(exercise.id) seed \(seed) \(side)"
                    #expect(analyzer.snapshot.repCount == truth.cleanCount(side: side), "\(context)")
                    #expect(analyzer.snapshot.rejectedCount == truth.rejectedCount(side: side), "\(context)")
                    let judged = events.compactMap(\.rep).map(\.faults)
                    let intended = truth.reps(side: side).filter { $0.outcome != .notCounted }.map(\.faults)
                    #expect(judged == intended, "\(context)")
                    #expect(analyzer.rejectedPoses.total == 0, "\(context)")
                }
            }
        }
    }
}
