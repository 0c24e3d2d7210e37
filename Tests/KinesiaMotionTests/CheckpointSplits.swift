import Foundation
import KinesiaSimulation

@testable import KinesiaMotion

/// Runs an analyzer over poses, once uninterrupted and once restored from a checkpoint at a
/// split point, and says where to split: the poses the checkpoint tests use.
enum CheckpointSplits {
    /// What an analyzer gives after each pose: its events as `MotionJSON` lines, then its
    /// snapshot and its frame (raw and smoothed measure) as lines.
    static func outputs(_ analyzer: inout MotionAnalyzer, _ pose: FlatPose) -> [String] {
        var lines = analyzer.process(pose).map { MotionJSON.encode($0, at: pose.timestamp) }
        lines.append(MotionJSON.encode(analyzer.snapshot, at: pose.timestamp))
        let frame = MotionFrame(t: pose.timestamp, raw: analyzer.rawValue, value: analyzer.snapshot.value)
        lines.append(MotionJSON.encode(frame))
        return lines
    }

    /// The lines of an analyzer going through `poses` from `start`, then finishing (the rejected
    /// poses and the last snapshot close the list).
    static func run(_ analyzer: inout MotionAnalyzer, _ poses: [FlatPose], from start: Int) -> [[String]] {
        var lines = poses[start...].map { outputs(&analyzer, $0) }
        analyzer.finish()
        lines.append([analyzer.rejectedPoses.summary, MotionJSON.encode(analyzer.snapshot, at: 0)])
        return lines
    }

    /// Poses of `exercise` from the simulator (both sides in turn, faults, dropped joints), with
    /// bad input and time jumps mixed in: a pose far ahead that the next one shows an outlier, a
    /// real gap of 3 s (its first pose held, then confirmed), a NaN, a repeated timestamp, low
    /// confidence for 40 poses (a setup issue), and a detector that swaps left and right for two
    /// poses every 50 (outliers of the measure).
    static func simulated(_ exercise: Exercise, seed: UInt64 = 5) throws -> [FlatPose] {
        var options = SimulationOptions(seed: seed)
        options.faultRate = 0.4
        options.reps = 4
        var poses = try ExerciseSimulator(exercise: exercise, options: options).run().poses.map(FlatPose.init)
        guard poses.count > 400 else { return poses }
        // Low confidence for 40 poses: a setup issue that comes and goes.
        for index in 60..<100 {
            for joint in Joint.allCases where poses[index][joint] != nil {
                poses[index].setConfidence(0.2, for: joint)
            }
        }
        for start in stride(from: 25, to: poses.count - 2, by: 50) {
            for index in start..<start + 2 { poses[index] = swappingSides(poses[index]) }
        }
        // A gap: everything after pose 300 comes 3 s later (the first pose after it is held).
        for index in 300..<poses.count { poses[index].timestamp += 3 }
        // An outlier 100 s ahead, then back to the stream's time.
        var outlier = poses[200]
        outlier.timestamp += 100
        poses.insert(outlier, at: 201)
        // A NaN coordinate and a repeated timestamp.
        var broken = poses[150]
        broken.setPoint(CGPoint(x: Double.nan, y: 1), for: .nose)
        poses.insert(broken, at: 151)
        poses.insert(poses[120], at: 121)
        return poses
    }

    /// `pose` with every joint on the other side (a detector's left-right swap).
    static func swappingSides(_ pose: FlatPose) -> FlatPose {
        var swapped = FlatPose(timestamp: pose.timestamp, imageSize: pose.imageSize)
        for joint in Joint.allCases {
            swapped.setPoint(pose[joint.mirrored], for: joint)
            swapped.setConfidence(pose.confidence(of: joint.mirrored), for: joint)
        }
        return swapped
    }

    /// The split points of an analyzer over `poses`: every `stride`-th pose, and the first few
    /// poses after which a rep or hold is under way, a pose is held for a time jump, a form rule
    /// is broken, an outlier is held out, or a visibility or setup change is pending.
    static func splits(
        _ exercise: Exercise, _ side: BodySide, _ poses: [FlatPose], stride: Int = 37, each: Int = 4
    ) -> [Int] {
        var analyzer = MotionAnalyzer(exercise: exercise, side: side)
        var points = Set(Swift.stride(from: 0, through: poses.count, by: stride))
        var found: [String: Int] = [:]
        for (index, pose) in poses.enumerated() {
            _ = analyzer.process(pose)
            let checkpoint = analyzer.checkpoint
            var kinds: [String] = []
            switch checkpoint.state {
            case .rep: kinds.append("rep")
            case .hold: kinds.append("hold")
            case .ready, .waitingForRest: break
            }
            if checkpoint.heldPose != nil { kinds.append("held") }
            if checkpoint.trackers.contains(where: { $0.brokenSince != nil }) { kinds.append("broken") }
            if checkpoint.signal.outlierSince != nil { kinds.append("outlier") }
            if analyzer.visibility != Debouncer(current: analyzer.visibility.current) {
                kinds.append("visibility")
            }
            if analyzer.setup != Debouncer(current: analyzer.setup.current) { kinds.append("setup") }
            for kind in kinds where found[kind, default: 0] < each {
                // Spread the splits of a kind: not twice within 10 poses.
                guard !points.contains(where: { abs($0 - (index + 1)) < 10 && $0 % stride != 0 }) else {
                    continue
                }
                found[kind, default: 0] += 1
                points.insert(index + 1)
            }
        }
        return points.sorted()
    }
}
