import Foundation
import KinesiaSimulation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

/// An analyzer restored from a checkpoint carries on exactly as the uninterrupted analyzer: the
/// same events and snapshots, byte for byte, whatever was under way at the split.
struct MotionAnalyzerCheckpointTests {
    /// Splits `poses` at every point of `splits`: the analyzer restored from the encoded
    /// checkpoint gives the uninterrupted run's lines from there on.
    private func expectSplitsContinueExactly(
        _ exercise: Exercise, _ side: BodySide, _ poses: [FlatPose], splits: [Int], context: String
    ) throws {
        var uninterrupted = MotionAnalyzer(exercise: exercise, side: side)
        let expected = CheckpointSplits.run(&uninterrupted, poses, from: 0)
        var analyzer = MotionAnalyzer(exercise: exercise, side: side)
        var next = 0
        for split in splits {
            while next < split {
                _ = analyzer.process(poses[next])
                next += 1
            }
            let bytes = try CheckpointCodec.encode(analyzer.checkpoint)
            let decoded = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: bytes)
            #expect(decoded == analyzer.checkpoint, "\(context) split \(split)")
            var restored = try MotionAnalyzer(exercise: exercise, side: side, restoring: decoded)
            #expect(restored.snapshot == analyzer.snapshot, "\(context) split \(split)")
            let lines = CheckpointSplits.run(&restored, poses, from: split)
            let tail = Array(expected[split...])
            guard lines != tail else { continue }
            let first =
                zip(lines, tail).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(lines.count, tail.count)
            let got = first < lines.count ? lines[first] : []
            let wanted = first < tail.count ? tail[first] : []
            Issue.record(
                "\(context): restored after pose \(split), first differs at pose \(split + first): \(got) != \(wanted)"
            )
        }
    }

    @Test(arguments: Exercise.catalog)
    func aRestoredAnalyzerContinuesSimulatedPosesExactly(_ exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let poses = try CheckpointSplits.simulated(exercise)
            for side in BodySide.allCases {
                let splits = CheckpointSplits.splits(exercise, side, poses)
                try expectSplitsContinueExactly(
                    exercise, side, poses, splits: splits, context: "\(exercise.id) \(side) simulated")
            }
        }
    }

    @Test(arguments: RecordingFixtures.allRecordings)
    func aRestoredAnalyzerContinuesARealRecordingExactlyAfterEveryPose(_ recording: String) async throws {
        try await offCooperativePool(.computing) {
            let poses = try JSONLinesRecording.load(contentsOf: RecordingFixtures.recording(recording))
                .map(FlatPose.init)
            for exercise in Exercise.catalog {
                for side in BodySide.allCases {
                    try expectSplitsContinueExactly(
                        exercise, side, poses, splits: Array(0...poses.count),
                        context: "\(exercise.id) \(side) \(recording)")
                }
            }
        }
    }

    @Test func theSimulatedSplitsCoverEverythingThatCanBeUnderWay() async throws {
        try await offCooperativePool(.computing) {
            // The splits above include a rep, a hold, a held time jump, a broken rule, an outlier
            // held out and pending debounces; otherwise the test would prove less than it says.
            var seen: Set<String> = []
            for exercise in Exercise.catalog {
                let poses = try CheckpointSplits.simulated(exercise)
                var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
                for split in CheckpointSplits.splits(exercise, .left, poses) {
                    analyzer = MotionAnalyzer(exercise: exercise, side: .left)
                    for pose in poses[..<split] { _ = analyzer.process(pose) }
                    let checkpoint = analyzer.checkpoint
                    if case .rep = checkpoint.state { seen.insert("rep") }
                    if case .hold = checkpoint.state { seen.insert("hold") }
                    if checkpoint.heldPose != nil { seen.insert("held") }
                    if checkpoint.trackers.contains(where: { $0.brokenSince != nil }) {
                        seen.insert("broken")
                    }
                    if checkpoint.signal.outlierSince != nil { seen.insert("outlier") }
                    if checkpoint.rejectedPoses.total > 0 { seen.insert("rejected") }
                }
            }
            #expect(seen == ["rep", "hold", "held", "broken", "outlier", "rejected"])
        }
    }

    @Test(arguments: [
        "signal", "trackers", "visibility", "setup", "state", "snapshot", "heldPose", "hasBest",
    ])
    func everyPartOfTheCheckpointIsNeeded(_ part: String) async throws {
        try await offCooperativePool(.computing) {
            // The same splits with one part of the checkpoint taken from a fresh analyzer: some
            // split must then give other lines, or the part (or the comparison) proves nothing.
            for exercise in [Exercise.squat, .wallSit, .shoulderAbduction] {
                let poses = try CheckpointSplits.simulated(exercise)
                var uninterrupted = MotionAnalyzer(exercise: exercise, side: .left)
                let expected = CheckpointSplits.run(&uninterrupted, poses, from: 0)
                let fresh = MotionAnalyzer(exercise: exercise, side: .left).checkpoint
                for split in CheckpointSplits.splits(exercise, .left, poses) {
                    var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
                    for pose in poses[..<split] { _ = analyzer.process(pose) }
                    var checkpoint = analyzer.checkpoint
                    switch part {
                    case "signal": checkpoint.signal = fresh.signal
                    case "trackers": checkpoint.trackers = fresh.trackers
                    case "visibility": checkpoint.visibility = fresh.visibility
                    case "setup": checkpoint.setup = fresh.setup
                    case "state": checkpoint.state = fresh.state
                    case "snapshot": checkpoint.snapshot = fresh.snapshot
                    case "heldPose": checkpoint.heldPose = fresh.heldPose
                    default: checkpoint.hasBest = fresh.hasBest
                    }
                    var restored = try MotionAnalyzer(exercise: exercise, side: .left, restoring: checkpoint)
                    // One split that diverges is enough.
                    if CheckpointSplits.run(&restored, poses, from: split) != Array(expected[split...]) {
                        return
                    }
                }
            }
            Issue.record("no split diverged without the checkpoint's \(part)")
        }
    }

    @Test func aCheckpointAfterABaselineAndAResetCarriesThem() throws {
        let exercise = Exercise.squat
        let poses = try CheckpointSplits.simulated(exercise)
        var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
        analyzer.startBaseline(reps: 2)
        var uninterrupted = analyzer
        let expected = CheckpointSplits.run(&uninterrupted, poses, from: 0)
        for pose in poses[..<250] { _ = analyzer.process(pose) }
        let bytes = try CheckpointCodec.encode(analyzer.checkpoint)
        var restored = try MotionAnalyzer(
            exercise: exercise, side: .left,
            restoring: CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: bytes))
        #expect(restored.snapshot.baseline != nil)
        #expect(CheckpointSplits.run(&restored, poses, from: 250) == Array(expected[250...]))
    }

    @Test func theSameStateAlwaysEncodesToTheSameBytes() throws {
        let poses = try CheckpointSplits.simulated(.wallSit)
        var analyzer = MotionAnalyzer(exercise: .wallSit, side: .right)
        for pose in poses[..<333] { _ = analyzer.process(pose) }
        let bytes = try CheckpointCodec.encode(analyzer.checkpoint)
        let again = try CheckpointCodec.encode(
            MotionAnalyzer(
                exercise: .wallSit, side: .right,
                restoring: CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: bytes)
            ).checkpoint)
        #expect(bytes == again)
    }

    @Test func aFreshAnalyzersCheckpointRestoresAFreshAnalyzer() throws {
        for exercise in Exercise.catalog {
            let fresh = MotionAnalyzer(exercise: exercise, side: .left)
            let restored = try MotionAnalyzer(exercise: exercise, side: .left, restoring: fresh.checkpoint)
            #expect(restored.checkpoint == fresh.checkpoint)
            #expect(restored.snapshot == fresh.snapshot)
        }
    }

    @Test func theCheckpointKeepsEveryFieldOfTheSnapshot() {
        // A field added to MotionSnapshot must be added to its checkpoint too.
        #expect(Mirror(reflecting: MotionSnapshot()).children.count == 12)
        var snapshot = MotionSnapshot()
        snapshot.value = 1
        snapshot.best = 2
        snapshot.repCount = 3
        snapshot.rejectedCount = 4
        snapshot.lastRep = Rep(peak: 5, faults: [.keepTrunkUpright], start: 6, end: 7)
        snapshot.holdProgress = 0.5
        snapshot.confidence = 0.25
        snapshot.setupIssues = [.tooFar, .lowConfidence]
        snapshot.isVisible = true
        snapshot.missingJoints = [.leftKnee]
        snapshot.isRunning = true
        snapshot.baseline = BaselineProgress(completed: 1, target: 3, value: 9)
        #expect(MotionSnapshot(restoring: snapshot.checkpoint) == snapshot)
    }
}
