import Foundation
import KinesiaAnalytics
import KinesiaMotion
import KinesiaSimulation
import KinesiaTestSupport
import Testing

/// The analytics on simulated sessions (whose reps are known) and on the repository's real
/// recordings, against the analysis core run side by side.
struct AnalyticsRecordingTests {
    static func run(_ poses: [Pose], _ exercise: Exercise) -> [AnalyticsRecord] {
        var analytics = MotionAnalytics(exercise: exercise)
        var records: [AnalyticsRecord] = []
        for pose in poses { records += analytics.process(pose) }
        return records + analytics.finish()
    }

    /// The reps ``MotionAnalyzer`` judges alone, with the analytics' baseline.
    static func oracleReps(_ poses: [Pose], _ exercise: Exercise, _ side: BodySide) -> [Rep] {
        var analyzer = MotionAnalyzer(exercise: exercise, side: side)
        analyzer.startBaseline()
        var reps: [Rep] = []
        for pose in poses {
            for event in analyzer.process(pose) {
                if case .repCompleted(let rep) = event { reps.append(rep) }
                if case .repRejected(let rep) = event { reps.append(rep) }
            }
        }
        return reps
    }

    static func tempos(_ records: [AnalyticsRecord], _ side: BodySide) -> [RepTempo] {
        records.compactMap { if case .repTempo(let t) = $0, t.side == side { t } else { nil } }
    }

    @Test(arguments: ["squat", "shoulderAbduction", "kneeFlexion", "hipAbduction"])
    func simulatedRepsAreTheSimulatorsReps(_ id: String) throws {
        var options = SimulationOptions(seed: 3)
        options.reps = 6
        options.sides = id == "squat" ? .together : .alternating
        let simulation = try ExerciseSimulator(exerciseID: id, options: options).run()
        let exercise = try #require(Exercise.named(id))
        let records = Self.run(simulation.poses, exercise)
        for side in BodySide.allCases {
            let truth = simulation.truth.countedReps(side: side)
            let tempos = Self.tempos(records, side)
            #expect(tempos.count == truth.count, "\(id) \(side)")
            for (tempo, rep) in zip(tempos, truth) {
                #expect(tempo.isClean == rep.faults.isEmpty, "\(id) \(side) \(tempo)")
                #expect(abs(tempo.peak - rep.peak) < 6, "\(id) \(side) peak \(tempo.peak) vs \(rep.peak)")
                #expect(tempo.start >= rep.start - 0.1 && tempo.end <= rep.end + 0.5, "\(id) \(side)")
            }
            let summary = try #require(
                records.compactMap {
                    if case .setSummary(let s) = $0, s.side == side, s.isComplete { s } else { nil }
                }
                .last)
            #expect(summary.rejected == simulation.truth.rejectedCount(side: side), "\(id) \(side)")
        }
    }

    @Test(arguments: RecordingPaths.all)
    func everyRepOfARecordingIsTheCoresRepWithConsistentTempo(_ name: String) throws {
        let poses = try Recording.load(PackagePaths.url("data/recordings").appendingPathComponent(name))
        var reps = 0
        for exercise in Exercise.catalog {
            let records = Self.run(poses, exercise)
            #expect(
                records.map { AnalyticsJSON.encode($0, at: 0) }
                    == Self.run(poses, exercise).map {
                        AnalyticsJSON.encode($0, at: 0)
                    })
            for side in BodySide.allCases {
                let oracle = Self.oracleReps(poses, exercise, side)
                let tempos = Self.tempos(records, side)
                #expect(tempos.map(\.peak) == oracle.map(\.peak), "\(name) \(exercise.id) \(side)")
                #expect(tempos.map(\.start) == oracle.map(\.start))
                #expect(tempos.map(\.end) == oracle.map(\.end))
                #expect(tempos.map(\.faults) == oracle.map(\.faults))
                for tempo in tempos {
                    #expect(tempo.timeUp >= 0 && tempo.timeAtTop >= 0 && tempo.timeDown >= 0, "\(tempo)")
                    #expect(
                        abs(tempo.timeUp + tempo.timeAtTop + tempo.timeDown - tempo.timeUnderTension) < 1e-9)
                    #expect(tempo.range >= 0)
                }
                reps += tempos.count
            }
        }
        #expect(reps > 0, "no exercise gives a rep on \(name)")
    }
}

enum RecordingPaths {
    static let all = [
        "p2s_balance_cam01_openpose25b.jsonl", "p2s_balance_cam03_openpose25b.jsonl",
        "p2s_balance_cam01_mediapipe.jsonl", "s2d_demo_walk_mediapipe.jsonl",
    ]
}
