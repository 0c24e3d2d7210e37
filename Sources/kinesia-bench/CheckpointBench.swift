import Foundation
import KinesiaAnalytics
import KinesiaMotion
import KinesiaSimulation

/// `kinesia-bench checkpoint`: the size of one session's checkpoint (``MotionAnalyzer`` and
/// ``MotionAnalytics``) encoded by ``CheckpointCodec``, and the time to take, encode, decode
/// and restore it, for every catalog exercise.
///
/// Method: the simulator makes a session (30 fps, pixel noise, dropped joints, faults, both
/// sides in turn); the analyzer and the analytics process 1,500 poses (50 s, mid-set), and the
/// figures are those of the checkpoint there: the median over `--rounds` rounds of the mean of
/// 1,000 repetitions, by the thread's CPU clock. `analyticsMaxBytes` is the largest analytics
/// checkpoint after any of the session's poses (its samples since the last rep grow in a long
/// rest).
enum CheckpointBench {
    struct Options {
        var rounds = 5
        var exercises = Exercise.catalog
    }

    static let usage = "usage: kinesia-bench checkpoint [--rounds N>=1] [--exercise ID]\n"
    static let repetitions = 1000

    static func main(_ arguments: [String]) -> Int32 {
        var options = Options()
        for (flag, value) in BenchArguments.pairs(arguments) {
            switch (flag, value) {
            case ("--rounds", let value?) where (Int(value) ?? 0) >= 1:
                options.rounds = Int(value) ?? options.rounds
            case ("--exercise", let value?) where Exercise.named(value) != nil:
                options.exercises = Exercise.named(value).map { [$0] } ?? []
            default:
                FileHandle.standardError.write(Data(usage.utf8))
                return 64
            }
        }
        do {
            for exercise in options.exercises {
                print(try measure(exercise, options: options))
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("kinesia-bench checkpoint: \(error)\n".utf8))
            return 1
        }
    }

    /// One exercise's figures, as a JSON object on one line.
    static func measure(_ exercise: Exercise, options: Options) throws -> String {
        var simulation = SimulationOptions(seed: 1)
        simulation.reps = 40
        let poses = try ExerciseSimulator(exercise: exercise, options: simulation).run().poses.map(
            FlatPose.init)
        let middle = min(1500, poses.count)
        var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
        var analytics = MotionAnalytics(exercise: exercise)
        var analyticsMaxBytes = 0
        for (index, pose) in poses.enumerated() {
            _ = analyzer.process(pose)
            _ = analytics.process(pose)
            if index + 1 == middle { break }
            if index % 10 == 0 {
                analyticsMaxBytes = max(
                    analyticsMaxBytes, try CheckpointCodec.encode(analytics.checkpoint).count)
            }
        }
        let analyzerBytes = try CheckpointCodec.encode(analyzer.checkpoint)
        let analyticsBytes = try CheckpointCodec.encode(analytics.checkpoint)
        analyticsMaxBytes = max(analyticsMaxBytes, analyticsBytes.count)

        var take: [Double] = []
        var encode: [Double] = []
        var decode: [Double] = []
        var restore: [Double] = []
        var analyticsEncode: [Double] = []
        var analyticsDecode: [Double] = []
        for round in 0..<(options.rounds + 1) {
            let checkpoint = analyzer.checkpoint
            let decoded = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: analyzerBytes)
            let figures = try [
                time { _ = analyzer.checkpoint },
                time { _ = try CheckpointCodec.encode(checkpoint) },
                time { _ = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: analyzerBytes) },
                time { _ = try MotionAnalyzer(exercise: exercise, side: .left, restoring: decoded) },
                time { _ = try CheckpointCodec.encode(analytics.checkpoint) },
                time {
                    _ = try CheckpointCodec.decode(MotionAnalytics.Checkpoint.self, from: analyticsBytes)
                },
            ]
            // Round 0 warms up (caches, lazy runtime metadata) and is not counted.
            guard round > 0 else { continue }
            take.append(figures[0])
            encode.append(figures[1])
            decode.append(figures[2])
            restore.append(figures[3])
            analyticsEncode.append(figures[4])
            analyticsDecode.append(figures[5])
        }
        let median = AnalysisBench.median
        let format = AnalysisBench.format
        return """
            {"bench":"checkpoint","exercise":"\(exercise.id)","poses":\(middle),"rounds":\(options.rounds),\
            "analyzerBytes":\(analyzerBytes.count),"takeNs":\(format(median(take))),\
            "encodeNs":\(format(median(encode))),"decodeNs":\(format(median(decode))),\
            "restoreNs":\(format(median(restore))),"analyticsBytes":\(analyticsBytes.count),\
            "analyticsMaxBytes":\(analyticsMaxBytes),"analyticsEncodeNs":\(format(median(analyticsEncode))),\
            "analyticsDecodeNs":\(format(median(analyticsDecode)))}
            """
    }

    /// The mean CPU time of `body` over ``repetitions`` runs, in nanoseconds.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = AnalysisBench.threadCPUNanoseconds()
        for _ in 0..<repetitions { try body() }
        return Double(AnalysisBench.threadCPUNanoseconds() &- start) / Double(repetitions)
    }
}
