import Foundation
import Testing

@testable import KinesiaMotion

/// One timestamp far ahead of the others (issue 9, item 6) must not poison a session: a jump of
/// more than ``SessionRules/suspectTimeJump`` is held until the next pose confirms it (a gap) or
/// shows it an outlier.
struct AnalyzerTimeJumpTests {
    /// Rest, four clean reps, rest: 4 reps for every exercise with reps.
    private static func fourReps(_ exercise: Exercise = .squat, gapAfterRep gap: Int? = nil) -> [Pose] {
        var script = PoseScript(exercise)
        script.hold(0, for: 1)
        let peak = PoseScript.cleanPeak(exercise)
        for rep in 0..<4 {
            switch exercise.kind {
            case .reps:
                script.rep(peak: peak)
            case .hold(_, let seconds):
                script.ramp(from: 0, to: peak, over: 0.5)
                script.hold(peak, for: seconds + 0.5)
                script.ramp(from: peak, to: 0, over: 0.5)
            }
            script.hold(0, for: 0.5)
            if rep == gap { script.gap(60) }
        }
        script.hold(0, for: 1)
        return script.poses
    }

    @Test(arguments: [Exercise.squat, .shoulderAbduction, .wallSit])
    func onePoseFarInTheFutureIsDroppedAndChangesNothing(exercise: Exercise) {
        let clean = Self.fourReps(exercise)
        let (reference, referenceEvents) = analyze(clean, exercise: exercise)
        #expect(reference.snapshot.repCount == 4)

        for future in [1e9, 3600, clean[clean.count / 2].timestamp + 2.5] {
            var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
            var events: [MotionEvent] = []
            for (index, pose) in clean.enumerated() {
                events += analyzer.process(pose)
                guard index == clean.count / 2 else { continue }
                var stray = pose
                stray.timestamp = future
                let before = analyzer.snapshot
                #expect(analyzer.process(stray).isEmpty)
                #expect(analyzer.snapshot == before)
                #expect(analyzer.isHoldingPose)
                #expect(analyzer.lastAcceptedTime == pose.timestamp)
            }
            #expect(events == referenceEvents, "t=\(future)")
            #expect(analyzer.snapshot == reference.snapshot, "t=\(future)")
            #expect(analyzer.snapshot.repCount == 4)
            #expect(analyzer.rejectedPoses == PoseRejections(timestampOutlier: 1), "t=\(future)")
            #expect(!analyzer.isHoldingPose)
        }
    }

    @Test func severalOutliersInARowAreEachDropped() {
        let clean = Self.fourReps()
        let (reference, _) = analyze(clean, exercise: .squat)
        var analyzer = MotionAnalyzer(exercise: .squat, side: .left)
        for (index, pose) in clean.enumerated() {
            if index == 40 {
                // Each stray is ahead of the last accepted pose; the next one comes back before it.
                for stray in [1e9, 5e8, 2e8] {
                    var copy = pose
                    copy.timestamp = stray
                    #expect(analyzer.process(copy).isEmpty)
                }
            }
            _ = analyzer.process(pose)
        }
        #expect(analyzer.snapshot == reference.snapshot)
        #expect(analyzer.rejectedPoses == PoseRejections(timestampOutlier: 3))
    }

    /// A real gap: the poses after it go on from its time, so the first one is held only until
    /// the next, then analysed; every rep counts and the events are those of an analysis that
    /// holds nothing, in the same order.
    @Test(arguments: [Exercise.squat, .shoulderAbduction, .wallSit])
    func aRealGapIsAcceptedWhenTheNextPoseConfirmsIt(exercise: Exercise) {
        let poses = Self.fourReps(exercise, gapAfterRep: 1)
        var unguarded = exercise
        unguarded.sessionRules.suspectTimeJump = .infinity
        let (reference, referenceEvents) = analyze(poses, exercise: unguarded)
        #expect(reference.snapshot.repCount == 4)

        let (analyzer, events) = analyze(poses, exercise: exercise)
        #expect(events == referenceEvents)
        #expect(analyzer.snapshot == reference.snapshot)
        #expect(analyzer.rejectedPoses.total == 0)
    }

    /// A source slower than one pose per jump bound: every pose is held until the next one, and
    /// nothing is lost but the last, which ``MotionAnalyzer/finish()`` drops.
    @Test func aSlowSourceLagsOnePoseAndLosesNothingButTheLastUnconfirmedOne() {
        var analyzer = MotionAnalyzer(exercise: .squat, side: .left)
        var body = Body(.squat, side: .left, value: 0)
        body.setPrimary(0, exercise: .squat, side: .left)
        for index in 0..<10 {
            _ = analyzer.process(body.pose(at: Double(index) * 3))
            #expect(analyzer.lastAcceptedTime == Double(max(0, index - 1)) * 3)
        }
        #expect(analyzer.rejectedPoses.total == 0)
        #expect(analyzer.isHoldingPose)
        analyzer.finish()
        #expect(!analyzer.isHoldingPose)
        #expect(analyzer.rejectedPoses == PoseRejections(timestampOutlier: 1))
        // Finishing again drops nothing more; the analyzer goes on.
        analyzer.finish()
        #expect(analyzer.rejectedPoses.total == 1)
        _ = analyzer.process(body.pose(at: 25.5))
        #expect(analyzer.lastAcceptedTime == 25.5)
    }

    /// A pose going back in time while a jump is held is dropped as such, and the held pose
    /// waits on.
    @Test func aPoseGoingBackWhileAJumpIsHeldLeavesItHeld() {
        let clean = Self.fourReps()
        var analyzer = MotionAnalyzer(exercise: .squat, side: .left)
        for pose in clean[..<30] { _ = analyzer.process(pose) }
        var jump = clean[30]
        jump.timestamp += 100
        _ = analyzer.process(jump)
        _ = analyzer.process(clean[10])
        #expect(analyzer.rejectedPoses == PoseRejections(timestampNotIncreasing: 1))
        #expect(analyzer.isHoldingPose)
        var after = clean[31]
        after.timestamp += 100
        _ = analyzer.process(after)
        #expect(analyzer.lastAcceptedTime == after.timestamp)
        #expect(analyzer.rejectedPoses.total == 1)
    }

    /// A source whose clock started over: the time base starts again, the counts stay.
    @Test func restartingTheTimeBaseKeepsTheCountsAndAnalysesTheNewTimeAfresh() {
        let poses = Self.fourReps()
        var analyzer = MotionAnalyzer(exercise: .squat, side: .left)
        analyzer.startBaseline(reps: 6)
        for pose in poses { _ = analyzer.process(pose) }
        #expect(analyzer.snapshot.repCount == 4)
        let best = analyzer.snapshot.best
        // Without a restart, the replay would go back in time.
        var unrestarted = analyzer
        _ = unrestarted.process(poses[5])
        #expect(unrestarted.rejectedPoses.timestampNotIncreasing == 1)

        analyzer.restartTimeBase()
        #expect(analyzer.lastAcceptedTime == nil)
        #expect(analyzer.snapshot.repCount == 4)
        #expect(analyzer.snapshot.best == best)
        #expect(analyzer.snapshot.baseline?.completed == 4)
        var replayed: [MotionEvent] = []
        for pose in poses { replayed += analyzer.process(pose) }
        // The replay's reps are found as by a fresh analysis (the baseline completes on the way).
        let (_, fresh) = analyze(poses, exercise: .squat)
        #expect(replayed.filter { $0.rep != nil } == fresh.filter { $0.rep != nil })
        #expect(analyzer.snapshot.repCount == 8)
        #expect(analyzer.snapshot.baseline?.isComplete == true)
        #expect(analyzer.rejectedPoses.total == 0)
    }
}
