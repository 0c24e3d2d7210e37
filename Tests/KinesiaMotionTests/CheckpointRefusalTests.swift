import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

/// A checkpoint that does not fit is refused with a typed error; bytes that are not a
/// checkpoint throw, never trap.
struct CheckpointRefusalTests {
    /// A squat analyzer in the middle of things (holding the first pose after a gap), and its
    /// encoded checkpoint; the index of the next pose.
    private static func midSession() throws -> (
        checkpoint: MotionAnalyzer.Checkpoint, bytes: [UInt8], next: Int
    ) {
        let poses = try CheckpointSplits.simulated(.squat)
        var analyzer = MotionAnalyzer(exercise: .squat, side: .left)
        var next = 0
        while next < poses.count, !analyzer.isHoldingPose || next < 250 {
            _ = analyzer.process(poses[next])
            next += 1
        }
        #expect(analyzer.isHoldingPose)
        return (analyzer.checkpoint, try CheckpointCodec.encode(analyzer.checkpoint), next)
    }

    /// The kind of the `CheckpointError` that `body` throws, `nil` when it throws none.
    private func kind(_ body: () throws -> Void) -> CheckpointError.Kind? {
        thrownError(CheckpointError.self, by: body)?.kind
    }

    @Test func aCheckpointOfAnotherExerciseIsRefused() throws {
        let (checkpoint, _, _) = try Self.midSession()
        for exercise in Exercise.catalog where exercise.id != "squat" {
            #expect(
                kind { _ = try MotionAnalyzer(exercise: exercise, side: .left, restoring: checkpoint) }
                    == .otherExercise)
        }
    }

    @Test func aCheckpointOfTheOtherSideIsRefused() throws {
        let (checkpoint, _, _) = try Self.midSession()
        #expect(
            kind { _ = try MotionAnalyzer(exercise: .squat, side: .right, restoring: checkpoint) }
                == .otherSide)
    }

    @Test func aCheckpointOfChangedThresholdsIsRefused() throws {
        let (checkpoint, _, _) = try Self.midSession()
        var changes: [Exercise] = []
        var exercise = Exercise.squat
        if case .reps(let start, let end, let minPeak) = exercise.kind {
            exercise.kind = .reps(start: start.nextUp, end: end, minPeak: minPeak)
        }
        changes.append(exercise)
        exercise = .squat
        exercise.formRules[0].limit += 1
        changes.append(exercise)
        exercise = .squat
        exercise.formRules.removeLast()
        changes.append(exercise)
        exercise = .squat
        exercise.view = .front
        changes.append(exercise)
        exercise = .squat
        exercise.sessionRules.baselineReps = 4
        changes.append(exercise)
        for keyPath in SessionRules.fingerprintedDoubles {
            exercise = .squat
            exercise.sessionRules[keyPath: keyPath] = exercise.sessionRules[keyPath: keyPath].nextUp
            changes.append(exercise)
        }
        for changed in changes {
            #expect(
                kind { _ = try MotionAnalyzer(exercise: changed, side: .left, restoring: checkpoint) }
                    == .otherThresholds, "\(changed)")
        }
        // The same thresholds in a new value are the same configuration.
        var same = Exercise.squat
        same.sessionRules.maximumSpeed = Exercise.squat.sessionRules.maximumSpeed
        #expect(kind { _ = try MotionAnalyzer(exercise: same, side: .left, restoring: checkpoint) } == nil)
    }

    @Test func theFingerprintCoversEverySessionRule() {
        // A field added to SessionRules must be added to the fingerprint (and this count).
        #expect(
            Mirror(reflecting: SessionRules()).children.count == SessionRules.fingerprintedDoubles.count + 1)
        #expect(Mirror(reflecting: Exercise.squat).children.count == 6)
        #expect(Mirror(reflecting: Exercise.squat.formRules[0]).children.count == 3)
        let fingerprints = Set(Exercise.catalog.map(CheckpointFingerprint.init))
        #expect(fingerprints.count == Exercise.catalog.count)
    }

    @Test func aCheckpointOfAnotherVersionIsRefused() throws {
        var (checkpoint, _, _) = try Self.midSession()
        checkpoint.version = MotionAnalyzer.Checkpoint.currentVersion + 1
        #expect(
            kind { _ = try MotionAnalyzer(exercise: .squat, side: .left, restoring: checkpoint) }
                == .unsupportedVersion)
    }

    @Test func aCheckpointWhoseContentCannotBeTheExercisesIsRefused() throws {
        var (checkpoint, _, _) = try Self.midSession()
        var tooManyRules = checkpoint
        tooManyRules.trackers.append(tooManyRules.trackers[0])
        #expect(
            kind { _ = try MotionAnalyzer(exercise: .squat, side: .left, restoring: tooManyRules) }
                == .inconsistent)
        checkpoint.heldPose?.pointMask |= 1 << 25
        #expect(
            kind { _ = try MotionAnalyzer(exercise: .squat, side: .left, restoring: checkpoint) }
                == .inconsistent)
        checkpoint.heldPose?.pointMask &= ~(1 << 25)
        checkpoint.heldPose?.xs.removeLast()
        #expect(
            kind { _ = try MotionAnalyzer(exercise: .squat, side: .left, restoring: checkpoint) }
                == .inconsistent)
    }

    @Test func everyTruncationOfAnEncodingThrows() throws {
        let (_, bytes, _) = try Self.midSession()
        for length in 0..<bytes.count {
            #expect(
                kind {
                    _ = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: bytes[..<length])
                }
                    == .unreadable, "\(length) of \(bytes.count) bytes")
        }
    }

    @Test func corruptEncodingsThrowOrRestoreButNeverTrap() throws {
        let (_, bytes, next) = try Self.midSession()
        var generator = SplitMix64(seed: 18)
        let poses = try CheckpointSplits.simulated(.squat)
        var refused = 0
        for _ in 0..<2000 {
            var corrupt = bytes
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                corrupt[Int.random(in: 0..<corrupt.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
            do throws(CheckpointError) {
                let decoded = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: corrupt)
                var analyzer = try MotionAnalyzer(exercise: .squat, side: .left, restoring: decoded)
                // Whatever a corruption left, the analysis goes on without trapping.
                for pose in poses[next..<next + 40] { _ = analyzer.process(pose) }
            } catch {
                refused += 1
            }
        }
        #expect(refused > 0)
    }

    @Test func bytesOfAnotherKindAreUnreadable() {
        for text in ["", "{}", "[]", "null", "{\"version\":1}", "\u{feff}{", "{\"exercise\":\"squat\"}"] {
            #expect(
                kind {
                    _ = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: Array(text.utf8))
                }
                    == .unreadable, "\(text)")
        }
    }
}
