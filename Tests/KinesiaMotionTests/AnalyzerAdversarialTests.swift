import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

/// Inputs a careless or hostile pose source can produce, and session calls at awkward moments.
struct AnalyzerAdversarialTests {
    /// Rest, two clean reps, a rep with a fault, rest.
    private static func set(_ exercise: Exercise = .shoulderFlexion, offset: Double = 0) -> [Pose] {
        var script = PoseScript(exercise)
        script.hold(0, for: 1)
        script.rep(peak: PoseScript.cleanPeak(exercise))
        script.rep(peak: PoseScript.cleanPeak(exercise))
        script.rep(peak: PoseScript.cleanPeak(exercise), duration: 3) { body, fraction in
            if fraction > 0.3, fraction < 0.7, let rule = exercise.formRules.first {
                body.breakRule(rule, side: .left)
            }
        }
        script.hold(0, for: 1)
        return script.poses.map { pose in
            var pose = pose
            pose.timestamp += offset
            return pose
        }
    }

    // MARK: Timestamps

    @Test(arguments: [1e300, 1.7e18, -1e300, 1e11])
    func anAbsurdTimestampIsDroppedAndDoesNotLockTheSessionOut(timestamp: Double) {
        let clean = Self.set()
        let reference = analyze(clean, exercise: .shoulderFlexion)
        #expect(reference.analyzer.snapshot.repCount == 2)
        var poisoned = clean
        var bad = clean[20]
        bad.timestamp = timestamp
        poisoned.insert(bad, at: 21)
        let (analyzer, events) = analyze(poisoned, exercise: .shoulderFlexion)
        #expect(events == reference.events)
        #expect(analyzer.snapshot == reference.analyzer.snapshot)
        #expect(analyzer.rejectedPoses.total == 1)
    }

    @Test func epochSecondsTimestampsCountLikeTimestampsFromZero() {
        let reference = analyze(Self.set(), exercise: .shoulderFlexion)
        let (analyzer, events) = analyze(Self.set(offset: 1.7e9), exercise: .shoulderFlexion)
        #expect(events.map(\.name) == reference.events.map(\.name))
        #expect(analyzer.snapshot.repCount == 2)
        #expect(analyzer.snapshot.rejectedCount == 1)
        #expect(analyzer.rejectedPoses.total == 0)
    }

    @Test func aTenMinuteGapMidRepAbandonsItAndCountingResumesAfterRest() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.gap(600)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .shoulderFlexion)
        let reps = events.compactMap(\.rep)
        #expect(reps.count == 1)
        #expect((reps.first?.start ?? 0) > 600)
        #expect(analyzer.snapshot.repCount == 1)
        // Still visible: a gap without poses is not an empty pose.
        #expect(events.filter { if case .visibilityChanged = $0 { true } else { false } }.count == 1)
    }

    @Test func aTenMinuteGapMidHoldAbandonsIt() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 10)
        script.gap(600)
        script.hold(90, for: 25)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .wallSit)
        #expect(events.filter(\.isCounting) == [.holdStarted])
        #expect(analyzer.snapshot.repCount == 0)
        #expect(analyzer.snapshot.holdProgress == nil)
    }

    // MARK: Points and image

    @Test(arguments: Exercise.catalog)
    func aPoseWithOnlyTheRootCountsNothingAndNamesWhatIsMissing(exercise: Exercise) {
        var script = PoseScript(exercise)
        script.custom(2) { time in
            Pose(
                points: [.root: CGPoint(x: 500, y: 500)], timestamp: time,
                imageSize: CGSize(width: 1000, height: 1000), confidence: [.root: 0.9])
        }
        let (analyzer, events) = analyze(script.poses, exercise: exercise)
        #expect(!events.contains { $0.isCounting })
        #expect(analyzer.snapshot.value == nil)
        #expect(!analyzer.snapshot.isVisible)
        #expect(analyzer.snapshot.missingJoints == analyzer.requiredJoints.filter { $0 != .root })
        #expect(analyzer.snapshot.setupIssues.isEmpty)
    }

    /// The rest pose of shoulder flexion with the left wrist (a required joint) moved to `point`.
    private static func wrist(at point: CGPoint) -> [Pose] {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1) { body, _ in body.left.elbowFlexion = 0 }
        return script.poses.map { pose in
            var pose = pose
            pose.points[.leftWrist] = point
            return pose
        }
    }

    @Test(arguments: [
        CGPoint(x: 0, y: 500), CGPoint(x: 1000, y: 500), CGPoint(x: 500, y: 0), CGPoint(x: 500, y: 1000),
        CGPoint(x: 19, y: 500), CGPoint(x: -40, y: 500), CGPoint(x: 500, y: 1200),
        // Exactly 2% (20 px of 1000) from an edge is within 2% of it.
        CGPoint(x: 20, y: 500), CGPoint(x: 980, y: 500), CGPoint(x: 500, y: 20), CGPoint(x: 500, y: 980),
    ])
    func aRequiredJointOnOrWithinTwoPercentOfAnEdgeIsTooClose(point: CGPoint) {
        let (analyzer, _) = analyze(Self.wrist(at: point), exercise: .shoulderFlexion)
        #expect(analyzer.snapshot.setupIssues == [.tooClose])
    }

    @Test(arguments: [CGPoint(x: 21, y: 500), CGPoint(x: 979, y: 500), CGPoint(x: 500, y: 21)])
    func aRequiredJointJustInsideTheMarginIsFine(point: CGPoint) {
        let (analyzer, _) = analyze(Self.wrist(at: point), exercise: .shoulderFlexion)
        #expect(analyzer.snapshot.setupIssues.isEmpty)
    }

    @Test(arguments: [
        CGSize(width: 0, height: 0), CGSize(width: -1000, height: 1000), CGSize(width: 1000, height: -1),
    ])
    func anImageSizeThatIsNotPositiveIsIgnoredLikeAMissingOne(size: CGSize) {
        var script = PoseScript(.shoulderFlexion)
        script.base = { body in
            body.scale = 0.3
            body.imageSize = size
        }
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .shoulderFlexion)
        #expect(analyzer.rejectedPoses.total == 0)
        #expect(analyzer.snapshot.repCount == 1)
        // Too far and too close need the frame: not judged.
        #expect(analyzer.snapshot.setupIssues.isEmpty)
        #expect(!events.contains { if case .setupChanged = $0 { true } else { false } })
    }

    @Test func confidenceAboveOneCountsAsOne() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1) { body, _ in body.confidence = 1.7 }
        let (analyzer, _) = analyze(script.poses, exercise: .shoulderFlexion)
        #expect(analyzer.snapshot.confidence == 1)
        #expect(analyzer.snapshot.setupIssues.isEmpty)
    }

    @Test func negativeConfidenceCountsAsZero() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1) { body, _ in body.confidence = -0.5 }
        let (analyzer, _) = analyze(script.poses, exercise: .shoulderFlexion)
        #expect(analyzer.snapshot.confidence == 0)
        #expect(analyzer.snapshot.setupIssues == [.lowConfidence])
    }

    @Test func aFewWildConfidencesCannotHideLowOnes() {
        // Mean of the raw figures: (4 * 0.3 + 10) / 5 > 0.5; of the figures as 0...1: 0.44.
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1) { body, _ in body.confidence = 0.3 }
        let poses = script.poses.map { pose in
            var pose = pose
            pose.confidence[.leftWrist] = 10
            return pose
        }
        let (analyzer, _) = analyze(poses, exercise: .shoulderFlexion)
        #expect(analyzer.snapshot.setupIssues == [.lowConfidence])
    }

    @Test func theOrderAPoseWasBuiltInDoesNotMatter() {
        let clean = Self.set(.shoulderAbduction)
        var generator = SplitMix64(seed: 7)
        let rebuilt = clean.map { pose in
            // Same content, dictionaries built in another order (another iteration order).
            var shuffled = Array(pose.points)
            for index in shuffled.indices.reversed() {
                shuffled.swapAt(index, Int(generator.next() % UInt64(index + 1)))
            }
            var points: [Joint: CGPoint] = [:]
            var confidence: [Joint: Double] = [:]
            for (joint, point) in shuffled {
                points[joint] = point
                confidence[joint] = pose.confidence[joint]
            }
            return Pose(
                points: points, timestamp: pose.timestamp, imageSize: pose.imageSize, confidence: confidence)
        }
        let first = analyze(clean, exercise: .shoulderAbduction)
        let second = analyze(rebuilt, exercise: .shoulderAbduction)
        #expect(first.events == second.events)
        #expect(first.analyzer.snapshot == second.analyzer.snapshot)
    }

    @Test func bestIsTheHighestValueSeenEvenWhenEveryValueIsNegative() {
        // Seated knee extension goes below 0 when the foot is tucked under the chair.
        var script = PoseScript(.kneeExtension)
        script.ramp(from: -20, to: -6, over: 1)
        script.hold(-6, for: 1)
        var analyzer = MotionAnalyzer(exercise: .kneeExtension, side: .left)
        var highest = -Double.infinity
        for pose in script.poses {
            _ = analyzer.process(pose)
            highest = max(highest, analyzer.snapshot.value ?? highest)
        }
        #expect(highest < -5)
        #expect(analyzer.snapshot.best == highest)
        // Nothing seen since a reset: 0, as before anything was seen.
        analyzer.reset()
        #expect(analyzer.snapshot.best == 0)
        // Half a second on (a pose more than 2 s on would be held until the next one confirms it).
        _ = analyzer.process(Body(.kneeExtension, side: .left, value: -8).pose(at: 2.5))
        #expect(analyzer.snapshot.best == analyzer.snapshot.value)
        #expect((analyzer.snapshot.value ?? 0) < -7)
    }

    // MARK: Calls at awkward moments

    @Test func aFaultBeforeAResetDoesNotRejectTheNextRep() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 100, duration: 3) { body, fraction in
            if fraction > 0.1 { body.trunkLean = 30 }
        }
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.hold(0, for: 1)
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        var events: [MotionEvent] = []
        for pose in script.poses {
            events += analyzer.process(pose)
            // Mid first rep, after its fault.
            if abs(pose.timestamp - 3) < 1e-9 {
                #expect(events.contains(.formFault(.keepTrunkUpright)))
                analyzer.reset()
            }
        }
        let reps = events.compactMap(\.rep)
        try #require(reps.count == 1)
        #expect(events.last == .repCompleted(reps[0]))
        #expect(reps[0].faults.isEmpty)
        #expect(analyzer.snapshot.repCount == 1)
        #expect(analyzer.snapshot.rejectedCount == 0)
    }

    @Test func resetDuringAHoldDropsItAndTheNextHoldNeedsThePatientToComeOut() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 40)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 31)
        var analyzer = MotionAnalyzer(exercise: .wallSit, side: .left)
        var events: [MotionEvent] = []
        for pose in script.poses {
            events += analyzer.process(pose)
            if abs(pose.timestamp - 12) < 1e-9 {
                #expect(analyzer.snapshot.holdProgress != nil)
                analyzer.reset()
                #expect(analyzer.snapshot.holdProgress == nil)
            }
        }
        // The first hold started, was dropped by the reset, and did not complete 30 s later;
        // the second one did.
        let counting = events.filter(\.isCounting)
        #expect(counting.map(\.name) == ["holdStarted", "holdStarted", "repCompleted"])
        #expect(analyzer.snapshot.repCount == 1)
        #expect((counting.last?.rep?.start ?? 0) > 44)
    }

    @Test func startingABaselineAgainStartsItOver() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        for peak in [150.0, 140, 90, 100, 110] { script.rep(peak: peak) }
        script.hold(0, for: 1)
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        analyzer.startBaseline()
        var events: [MotionEvent] = []
        var restarted = false
        for pose in script.poses {
            events += analyzer.process(pose)
            if !restarted, analyzer.snapshot.repCount == 2 {
                #expect(analyzer.snapshot.baseline?.completed == 2)
                analyzer.startBaseline()
                restarted = true
            }
        }
        #expect(analyzer.snapshot.baseline?.completed == 3)
        let completions = events.compactMap {
            if case .baselineCompleted(let value) = $0 { value } else { nil }
        }
        try #require(completions.count == 1)
        // The highest of the last three reps only (the earlier 150 and 140 were replaced).
        #expect(abs(completions[0] - 110) < 2)
        #expect(completions[0] == analyzer.snapshot.baseline?.value)
    }
}
