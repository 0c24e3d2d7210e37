import Foundation
import KinesiaMotion
import KinesiaTestSupport
import Testing

/// The analysis on the real recordings, read through the recording readers.
struct RealRecordingAnalysisTests {
    static func events(_ recording: String, _ exercise: Exercise, _ side: BodySide) throws -> (
        events: [String], snapshot: MotionSnapshot
    ) {
        let poses = try JSONLinesRecording.load(contentsOf: RecordingFixtures.recording(recording))
        var analyzer = MotionAnalyzer(exercise: exercise, side: side)
        var lines: [String] = []
        for pose in poses {
            for event in analyzer.process(pose) { lines.append(MotionJSON.encode(event, at: pose.timestamp)) }
        }
        return (lines, analyzer.snapshot)
    }

    @Test(arguments: [Exercise.shoulderFlexion, .shoulderAbduction], BodySide.allCases)
    func shoulderExercisesCountNoRepsOnTheWalkingRecording(_ exercise: Exercise, _ side: BodySide) throws {
        // Arms swing while walking (up to about 37 degrees), never up to a rep's minimum peak.
        let (events, snapshot) = try Self.events("s2d_demo_walk_mediapipe.jsonl", exercise, side)
        #expect(snapshot.repCount == 0)
        #expect(snapshot.rejectedCount == 0)
        #expect(!events.contains { $0.contains("\"rep\":") })
        #expect(snapshot.best > 20)  // the arms were measured, not missing
    }

    @Test(arguments: RecordingFixtures.allRecordings)
    func theSameRecordingTwiceGivesIdenticalEventsForEveryExercise(_ recording: String) async throws {
        try await offCooperativePool(.computing) {
            for exercise in Exercise.catalog {
                for side in BodySide.allCases {
                    let first = try Self.events(recording, exercise, side)
                    let second = try Self.events(recording, exercise, side)
                    #expect(first.events == second.events, "\(exercise.id) \(side)")
                    #expect(first.snapshot == second.snapshot, "\(exercise.id) \(side)")
                }
            }
        }
    }

    @Test func theOpenPoseFolderAndTheRecordingGiveTheSameMeasures() throws {
        // The BODY_25B fixture is the recording's first 12 frames: same points, same angles.
        let folder = try OpenPoseRecording.load(
            folder: RecordingFixtures.openPose("body25b"), options: .init(format: .body25B, fps: 60))
        let recording = try JSONLinesRecording.load(
            contentsOf: RecordingFixtures.recording("p2s_balance_cam01_openpose25b.jsonl"))
        for (index, pose) in folder.enumerated() where index != 5 && index != 7 {
            for measure in [Measure.shoulderElevation, .hipFlexion, .kneeFlexion, .elbowFlexion] {
                // Both measured: two missing values are no agreement.
                let a = try #require(measure.value(in: pose, side: .left), "frame \(index) \(measure)")
                let b = try #require(
                    measure.value(in: recording[index], side: .left), "frame \(index) \(measure)")
                #expect(abs(a - b) < 0.01, "frame \(index) \(measure)")
            }
        }
    }
}
