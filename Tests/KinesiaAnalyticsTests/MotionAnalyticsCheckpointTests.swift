import Foundation
import KinesiaSimulation
import KinesiaTestSupport
import Testing

@testable import KinesiaAnalytics
@testable import KinesiaMotion

/// Analytics restored from a checkpoint carry on exactly as the uninterrupted analytics: the
/// same records, byte for byte, whatever was under way at the split.
struct MotionAnalyticsCheckpointTests {
    /// The records of analytics going through `poses` from `start` (as `AnalyticsJSON` lines, one
    /// list per pose), then those of `finish()`.
    private static func run(_ analytics: inout MotionAnalytics, _ poses: [FlatPose], from start: Int)
        -> [[String]]
    {
        var lines = poses[start...].map { pose in
            analytics.process(pose).map { AnalyticsJSON.encode($0, at: pose.timestamp) }
        }
        lines.append(analytics.finish().map { AnalyticsJSON.encode($0, at: 0) })
        return lines
    }

    /// Both sides moving in turn and together, with the bad input and time jumps of the
    /// analyzer's tests.
    private static func poses(_ exercise: Exercise) throws -> [FlatPose] {
        var options = SimulationOptions(seed: 9)
        options.reps = 4
        options.faultRate = 0.4
        options.sides = .alternating
        var poses = try ExerciseSimulator(exercise: exercise, options: options).run().poses.map(FlatPose.init)
        guard poses.count > 400 else { return poses }
        for index in 300..<poses.count { poses[index].timestamp += 3 }
        var outlier = poses[200]
        outlier.timestamp += 100
        poses.insert(outlier, at: 201)
        return poses
    }

    /// Every 37th pose, and the first poses after which a rep is under way on a side, a rep waits
    /// for its pair, a set is under way, or a pose is held.
    private static func splits(_ exercise: Exercise, _ poses: [FlatPose]) -> [Int] {
        var analytics = MotionAnalytics(exercise: exercise)
        var points = Set(stride(from: 0, through: poses.count, by: 37))
        var found: [String: Int] = [:]
        for (index, pose) in poses.enumerated() {
            _ = analytics.process(pose)
            let checkpoint = analytics.checkpoint
            var kinds: [String] = []
            for side in [checkpoint.left, checkpoint.right] {
                switch side.analyzer.state {
                case .rep, .hold: kinds.append("attempt")
                case .ready, .waitingForRest: break
                }
                if side.analyzer.heldPose != nil { kinds.append("held") }
            }
            if !checkpoint.leftTally.unpaired.isEmpty || !checkpoint.rightTally.unpaired.isEmpty {
                kinds.append("unpaired")
            }
            if checkpoint.lastRepEnd != nil { kinds.append("set") }
            for kind in kinds where found[kind, default: 0] < 4 && !points.contains(index + 1) {
                found[kind, default: 0] += 1
                points.insert(index + 1)
            }
        }
        return points.sorted()
    }

    private func expectSplitsContinueExactly(
        _ exercise: Exercise, _ poses: [FlatPose], splits: [Int], context: String
    ) throws {
        var uninterrupted = MotionAnalytics(exercise: exercise)
        let expected = Self.run(&uninterrupted, poses, from: 0)
        var analytics = MotionAnalytics(exercise: exercise)
        var next = 0
        for split in splits {
            while next < split {
                _ = analytics.process(poses[next])
                next += 1
            }
            let bytes = try CheckpointCodec.encode(analytics.checkpoint)
            let decoded = try CheckpointCodec.decode(MotionAnalytics.Checkpoint.self, from: bytes)
            #expect(decoded == analytics.checkpoint, "\(context) split \(split)")
            var restored = try MotionAnalytics(exercise: exercise, restoring: decoded)
            let lines = Self.run(&restored, poses, from: split)
            #expect(lines == Array(expected[split...]), "\(context): restored after pose \(split)")
        }
    }

    @Test(arguments: Exercise.catalog)
    func restoredAnalyticsContinueSimulatedPosesExactly(_ exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let poses = try Self.poses(exercise)
            let splits = Self.splits(exercise, poses)
            try expectSplitsContinueExactly(
                exercise, poses, splits: splits, context: "\(exercise.id) simulated")
        }
    }

    @Test func theSplitsCoverRepsWaitingForTheirPair() async throws {
        try await offCooperativePool(.computing) {
            // A rep waiting for the other side's is state a checkpoint must carry: the splits above
            // include some (on the exercises whose sides move in turn).
            var unpaired = 0
            for exercise in Exercise.catalog {
                let poses = try Self.poses(exercise)
                for split in Self.splits(exercise, poses) {
                    var analytics = MotionAnalytics(exercise: exercise)
                    for pose in poses[..<split] { _ = analytics.process(pose) }
                    let checkpoint = analytics.checkpoint
                    if !checkpoint.leftTally.unpaired.isEmpty || !checkpoint.rightTally.unpaired.isEmpty {
                        unpaired += 1
                    }
                }
            }
            #expect(unpaired >= 10)
        }
    }

    @Test func restoredAnalyticsContinueTheRealRecordingsExactlyAfterEveryPose() async throws {
        try await offCooperativePool(.computing) {
            for recording in [
                "p2s_balance_cam01_openpose25b.jsonl", "p2s_balance_cam03_openpose25b.jsonl",
                "p2s_balance_cam01_mediapipe.jsonl", "s2d_demo_walk_mediapipe.jsonl",
            ] {
                let poses = try JSONLinesRecording.load(
                    contentsOf: PackagePaths.url("data/recordings").appendingPathComponent(recording)
                ).map(FlatPose.init)
                for exercise in Exercise.catalog {
                    try expectSplitsContinueExactly(
                        exercise, poses, splits: Array(stride(from: 0, through: poses.count, by: 3)),
                        context: "\(exercise.id) \(recording)")
                }
            }
        }
    }

    /// The kind of the `CheckpointError` that `body` throws, `nil` when it throws none.
    private func kind(_ body: () throws -> Void) -> CheckpointError.Kind? {
        thrownError(CheckpointError.self, by: body)?.kind
    }

    @Test func aCheckpointThatDoesNotFitIsRefused() throws {
        let poses = try Self.poses(.squat)
        var analytics = MotionAnalytics(exercise: .squat)
        for pose in poses[..<250] { _ = analytics.process(pose) }
        let checkpoint = analytics.checkpoint
        #expect(kind { _ = try MotionAnalytics(exercise: .wallSit, restoring: checkpoint) } == .otherExercise)
        var rules = AnalyticsRules()
        rules.setBreak += 1
        #expect(
            kind { _ = try MotionAnalytics(exercise: .squat, rules: rules, restoring: checkpoint) }
                == .otherThresholds)
        rules = AnalyticsRules()
        rules.baselineReps = 3
        #expect(
            kind { _ = try MotionAnalytics(exercise: .squat, rules: rules, restoring: checkpoint) }
                == .otherThresholds)
        var exercise = Exercise.squat
        exercise.sessionRules.setupDebounce += 0.1
        #expect(
            kind { _ = try MotionAnalytics(exercise: exercise, restoring: checkpoint) } == .otherThresholds)
        var swapped = checkpoint
        swap(&swapped.left, &swapped.right)
        #expect(kind { _ = try MotionAnalytics(exercise: .squat, restoring: swapped) } == .otherSide)
        var newer = checkpoint
        newer.version += 1
        #expect(kind { _ = try MotionAnalytics(exercise: .squat, restoring: newer) } == .unsupportedVersion)
        var unknownFault = checkpoint
        unknownFault.leftTally.rejectedByFault["slouch"] = 1
        #expect(kind { _ = try MotionAnalytics(exercise: .squat, restoring: unknownFault) } == .inconsistent)
        var huge = checkpoint
        huge.setNumber = .max
        #expect(kind { _ = try MotionAnalytics(exercise: .squat, restoring: huge) } == .inconsistent)
    }

    @Test func everyTruncationOfAnEncodingThrows() throws {
        let poses = try Self.poses(.shoulderAbduction)
        var analytics = MotionAnalytics(exercise: .shoulderAbduction)
        for pose in poses[..<250] { _ = analytics.process(pose) }
        let bytes = try CheckpointCodec.encode(analytics.checkpoint)
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(
                kind {
                    _ = try CheckpointCodec.decode(MotionAnalytics.Checkpoint.self, from: bytes[..<length])
                }
                    == .unreadable)
        }
    }

    @Test func theCheckpointKeepsEveryFieldOfARepsTempo() {
        let tempo = RepTempo(
            side: .right, number: 2, set: 3, faults: [.keepTrunkUpright], peak: 90.5, low: 1.25, start: 10,
            peakTime: 11, end: 12.5, timeUp: 0.75, timeAtTop: 0.5, timeDown: 1.25)
        #expect(Mirror(reflecting: tempo).children.count == 12)
        #expect(RepTempo(restoring: tempo.checkpoint) == tempo)
    }
}
