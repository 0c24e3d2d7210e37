import Foundation
import KinesiaSimulation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

/// `process(FlatPose)` is the same analysis as `process(Pose)`: for real recordings, simulated
/// sessions and bad input, the events, snapshots, raw values and rejections are identical, pose
/// by pose, including when one flat pose is shared by several analyzers.
struct FlatPoseAnalysisTests {
    /// Feeds `poses` to three analyzers per side: one through `Pose`, one through a new
    /// `FlatPose` per pose, and one through a single `FlatPose` reused for every pose (as the
    /// worker does); expects identical results after every pose.
    ///
    /// - Returns: How many events the analyzers gave (by `Pose`, both sides), so that callers
    ///   can check the comparison was not of empty lists.
    @discardableResult
    func expectIdenticalPaths(
        _ poses: [Pose], exercise: Exercise, context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        var byPose = BodySide.allCases.map { MotionAnalyzer(exercise: exercise, side: $0) }
        var byFlat = byPose
        var byShared = byPose
        var shared = FlatPose(timestamp: 0)
        var eventCount = 0
        for (number, pose) in poses.enumerated() {
            shared.load(pose)
            for side in byPose.indices {
                let expected = byPose[side].process(pose)
                let flat = byFlat[side].process(FlatPose(pose))
                let reused = byShared[side].process(shared)
                eventCount += expected.count
                guard expected == flat, expected == reused, byPose[side].snapshot == byFlat[side].snapshot,
                    byPose[side].snapshot == byShared[side].snapshot,
                    byPose[side].rawValue == byFlat[side].rawValue,
                    byPose[side].rawValue == byShared[side].rawValue,
                    byPose[side].rejectedPoses == byFlat[side].rejectedPoses,
                    byPose[side].rejectedPoses == byShared[side].rejectedPoses
                else {
                    Issue.record(
                        "\(context) \(byPose[side].side): pose #\(number) differs: \(expected) / \(flat) / \(reused)",
                        sourceLocation: sourceLocation)
                    return eventCount
                }
            }
        }
        return eventCount
    }

    @Test(arguments: RecordingFixtures.allRecordings)
    func everyRecordingGivesTheSameResultsThroughFlatPoses(_ recording: String) throws {
        let poses = try JSONLinesRecording.load(contentsOf: RecordingFixtures.recording(recording))
        #expect(poses.count >= 100)
        var events = 0
        for exercise in Exercise.catalog {
            events += expectIdenticalPaths(poses, exercise: exercise, context: "\(recording) \(exercise.id)")
        }
        // Events to compare on every recording (visibility, setup, reps), not only silence.
        #expect(events >= Exercise.catalog.count, "\(recording): \(events) events")
    }

    @Test func theRecordingsListCoversEveryRecordingInTheDataFolder() throws {
        let folder = PackagePaths.url("data/recordings")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".jsonl") }
        #expect(Set(files) == Set(RecordingFixtures.allRecordings))
    }

    @Test(arguments: Exercise.catalog)
    func simulatedSessionsWithBadInputGiveTheSameResultsThroughFlatPoses(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            var options = SimulationOptions(seed: 7)
            options.faultRate = 0.4
            options.noise = 1.5
            let simulation = try ExerciseSimulator(exercise: exercise, options: options).run()
            var poses: [Pose] = []
            for (number, pose) in simulation.poses.enumerated() {
                poses.append(pose)
                guard number % 37 == 5 else { continue }
                poses.append(contentsOf: Self.badVariants(of: pose))
            }
            let events = expectIdenticalPaths(poses, exercise: exercise, context: exercise.id)
            #expect(events > 0)
        }
    }

    /// Poses the analyzer must drop, or judge with care, next to a sound `pose`.
    static func badVariants(of pose: Pose) -> [Pose] {
        var variants: [Pose] = []
        func variant(_ change: (inout Pose) -> Void) {
            var copy = pose
            change(&copy)
            variants.append(copy)
        }
        let joint = pose.points.keys.min { $0.index < $1.index } ?? .leftShoulder
        variant { $0.timestamp = .nan }
        variant { $0.timestamp = .infinity }
        variant { $0.timestamp = 2e10 }
        variant { $0.timestamp -= 0.001 }  // goes back
        variant { $0.points[joint] = CGPoint(x: Double.nan, y: 10) }
        variant { $0.points[joint] = CGPoint(x: 10, y: -Double.infinity) }
        variant { $0.points[joint] = CGPoint(x: 5e6, y: 10) }
        variant { $0.points[joint] = CGPoint(x: 10, y: 20_000) }
        variant { $0.confidence[.rightAnkle] = .nan }
        variant {
            $0.points[.rightAnkle] = nil; $0.confidence[.rightAnkle] = .infinity
        }
        variant { $0.imageSize = CGSize(width: Double.nan, height: 720) }
        variant { $0.imageSize = CGSize(width: 0, height: 720) }
        variant { $0.imageSize = CGSize(width: -1280, height: 720) }
        variant { $0.imageSize = nil }
        variant { $0.confidence[joint] = 7 }  // clamped to 1
        variant { $0.confidence[joint] = -3 }  // clamped to 0
        variant { $0.points = [:] }
        variant { $0.timestamp += 0.0001 }  // sound again
        return variants
    }

    @Test func aFlatPoseHoldsExactlyThePoseItWasMadeFrom() {
        let pose = Pose(
            points: [.leftShoulder: CGPoint(x: 320.125, y: 240), .rightAnkle: CGPoint(x: -1, y: Double.nan)],
            timestamp: 12.25, imageSize: CGSize(width: 640, height: 480),
            confidence: [.leftShoulder: 0.875, .nose: 1.5])
        let flat = FlatPose(pose)
        #expect(flat[.leftShoulder] == CGPoint(x: 320.125, y: 240))
        #expect(flat[.rightAnkle]?.x == -1)
        #expect(flat[.rightAnkle]?.y.isNaN == true)
        #expect(flat[.leftElbow] == nil)
        #expect(flat.confidence(of: .nose) == 1.5)
        #expect(flat.confidence(of: .rightAnkle) == nil)
        #expect(flat.pointMask == Joint.leftShoulder.bit | Joint.rightAnkle.bit)
        var sound = pose
        sound.points[.rightAnkle] = CGPoint(x: -1, y: 2)
        #expect(FlatPose(sound).pose == sound)
        #expect(FlatPose(sound) == FlatPose(sound))
    }

    @Test func reloadingAFlatPoseForgetsThePreviousJoints() {
        var flat = FlatPose(
            Pose(points: [.nose: CGPoint(x: 1, y: 2)], timestamp: 1, confidence: [.nose: 0.5]))
        flat.load(Pose(points: [.leftHip: CGPoint(x: 3, y: 4)], timestamp: 2))
        #expect(flat.pose == Pose(points: [.leftHip: CGPoint(x: 3, y: 4)], timestamp: 2))
        flat.setPoint(nil, for: .leftHip)
        flat.setConfidence(0.25, for: .leftHip)
        #expect(flat.pose == Pose(timestamp: 2, confidence: [.leftHip: 0.25]))
    }
}
