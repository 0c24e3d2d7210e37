import Testing

@testable import KinesiaMotion

struct AnalyzerSignalTests {
    /// Processes `poses`, returning the snapshot value after each one.
    private func values(_ poses: [Pose], exercise: Exercise = .shoulderFlexion) -> (
        MotionAnalyzer, [MotionEvent], [Double?]
    ) {
        var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
        var events: [MotionEvent] = []
        var values: [Double?] = []
        for pose in poses {
            events += analyzer.process(pose)
            values.append(analyzer.snapshot.value)
        }
        return (analyzer, events, values)
    }

    @Test func aSingleFrameSpikeIsIgnored() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(5, for: 1)
        let spike = script.poses.count
        script.hold(170, for: 1 / 30)
        script.hold(5, for: 1)
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        var events: [MotionEvent] = []
        for (index, pose) in script.poses.enumerated() {
            let before = analyzer.snapshot.value
            events += analyzer.process(pose)
            if index == spike {
                #expect(analyzer.snapshot.value == before)
                #expect(abs((analyzer.rawValue ?? 0) - 170) < 1e-9)
            }
        }
        #expect(analyzer.snapshot.best < 5.5)
        #expect(events.filter(\.isCounting).isEmpty)
    }

    @Test func aSustainedJumpIsAcceptedAfterTheHoldOut() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        let jump = script.poses.count
        script.hold(90, for: 1.5)
        script.hold(0, for: 1)
        let (analyzer, events, values) = values(script.poses)
        // Held out for the first 0.2 s (6 frames at 30 fps)...
        for index in jump..<(jump + 6) { #expect((values[index] ?? 99) < 1, "frame \(index - jump)") }
        // ...then accepted and followed.
        #expect((values[jump + 6] ?? 0) > 20)
        #expect((values[jump + 12] ?? 0) > 80)
        #expect(analyzer.snapshot.repCount == 1)
        #expect(events.compactMap(\.rep).count == 1)
    }

    @Test func fastRealMovementIsNotAnOutlier() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        // 0 -> 90 -> 0 in 0.8 s: up to about 350 degrees per second.
        script.rep(peak: 90, duration: 0.8)
        script.hold(0, for: 1)
        let (analyzer, _, _) = values(script.poses)
        #expect(analyzer.snapshot.repCount == 1)
        #expect(analyzer.snapshot.best > 75)
    }

    @Test func aDetectorSwappingLeftAndRightForAFewFramesCreatesNoRep() {
        var script = PoseScript(.shoulderFlexion)
        // The right arm is raised, the measured left one rests; the detector swaps the sides
        // for 5 frames, twice.
        let raised: (inout Body, Double) -> Void = { body, _ in body.right.armElevation = 120 }
        script.hold(0, for: 1, adjust: raised)
        let swaps = [script.poses.count, script.poses.count + 40]
        script.hold(0, for: 3, adjust: raised)
        let poses = script.poses.enumerated().map { index, pose in
            guard swaps.contains(where: { (($0)..<($0 + 5)).contains(index) }) else { return pose }
            var swapped = pose
            swapped.points = Dictionary(uniqueKeysWithValues: pose.points.map { ($0.key.mirrored, $0.value) })
            return swapped
        }
        let (analyzer, events, _) = values(poses)
        #expect(events.filter(\.isCounting).isEmpty)
        #expect(analyzer.snapshot.best < 1)
    }

    @Test func smoothingRestartsAfterAGapOfMoreThanHalfASecond() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.gap(0.6)
        let after = script.poses.count
        script.hold(40, for: 0.5)
        let (_, _, values) = values(script.poses)
        #expect(abs((values[after] ?? 0) - 40) < 1e-9)

        var shortGap = PoseScript(.shoulderFlexion)
        shortGap.hold(0, for: 1)
        shortGap.gap(0.3)
        let afterShort = shortGap.poses.count
        shortGap.hold(40, for: 0.5)
        let (_, _, smoothed) = self.values(shortGap.poses)
        let value = try #require(smoothed[afterShort])
        #expect(value > 5 && value < 39, "still smoothed across a short gap: \(value)")
    }

    @Test func missingMeasuredJointsAlsoRestartSmoothingAfterHalfASecond() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.hold(0, for: 0.7)
        let after = script.poses.count
        script.hold(40, for: 0.5)
        let poses = script.poses.enumerated().map { index, pose in
            var pose = pose
            if index >= 30, index < after { pose.points[.leftElbow] = nil }
            return pose
        }
        let (_, _, values) = values(poses)
        #expect(values[35] == nil)
        #expect(abs((values[after] ?? 0) - 40) < 1e-9)
    }

    @Test func aShortLossOfTheMeasuredJointsDoesNotStopTheRep() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 90, duration: 3)
        script.hold(0, for: 1)
        let poses = script.poses.map { pose in
            var pose = pose
            if pose.timestamp >= 1.8, pose.timestamp < 2.3 { pose.points[.leftElbow] = nil }
            return pose
        }
        let (analyzer, events, values) = values(poses)
        #expect(values[60] == nil)
        #expect(analyzer.snapshot.repCount == 1)
        #expect(events.compactMap(\.rep).count == 1)
    }

    @Test func measuredJointsGoneForMoreThanASecondAbandonTheRep() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 90, duration: 3)
        script.hold(0, for: 1)
        let secondRep = script.time
        script.rep(peak: 90, duration: 2)
        script.hold(0, for: 1)
        let poses = script.poses.map { pose in
            var pose = pose
            if pose.timestamp >= 1.5, pose.timestamp < 2.8 { pose.points[.leftElbow] = nil }
            return pose
        }
        let (analyzer, events, _) = values(poses)
        let reps = events.compactMap(\.rep)
        #expect(reps.count == 1)
        #expect((reps.first?.start ?? 0) > secondRep)
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func noPoseAtAllForOverASecondMidRepAbandonsIt() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.gap(1.2)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        let (abandoned, events, _) = values(script.poses)
        #expect(events.filter(\.isCounting).isEmpty)
        #expect(abandoned.snapshot.repCount == 0)

        var short = PoseScript(.shoulderFlexion)
        short.hold(0, for: 1)
        short.ramp(from: 0, to: 90, over: 1)
        short.gap(0.8)
        short.ramp(from: 90, to: 0, over: 1)
        short.hold(0, for: 1)
        let (kept, _, _) = values(short.poses)
        #expect(kept.snapshot.repCount == 1)
    }

    @Test func anEmptyPoseStreamMidRepForOverASecondAbandonsIt() {
        var script = PoseScript(.squat)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.empty(for: 1.5)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        let (analyzer, events, _) = values(script.poses, exercise: .squat)
        #expect(events.filter(\.isCounting).isEmpty)
        #expect(analyzer.snapshot.repCount == 0)
    }

    @Test func bestIsTheHighestSmoothedValueSinceReset() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 120)
        script.hold(0, for: 1)
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        var highest = 0.0
        for pose in script.poses {
            _ = analyzer.process(pose)
            highest = max(highest, analyzer.snapshot.value ?? 0)
        }
        #expect(analyzer.snapshot.best == highest)
        #expect(highest > 115)
        analyzer.reset()
        #expect(analyzer.snapshot.best == 0)
        var more = PoseScript(.shoulderFlexion)
        more.gap(script.time + 1)
        more.rep(peak: 70)
        more.hold(0, for: 0.5)
        for pose in more.poses { _ = analyzer.process(pose) }
        #expect(analyzer.snapshot.best > 65 && analyzer.snapshot.best < 71)
    }

    @Test func confidenceIsTheLowestAmongTheMeasuredJoints() {
        var body = Body(.shoulderFlexion, side: .left, value: 10)
        var pose = body.pose(at: 0)
        pose.confidence[.leftElbow] = 0.4
        pose.confidence[.leftWrist] = 0.1  // needed by a rule, not measured
        pose.confidence[.rightKnee] = 0.05  // not needed
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        _ = analyzer.process(pose)
        #expect(analyzer.snapshot.confidence == 0.4)

        body.confidence = nil
        _ = analyzer.process(body.pose(at: 0.1))
        #expect(analyzer.snapshot.confidence == nil)
        _ = analyzer.process(Pose(timestamp: 0.2))
        #expect(analyzer.snapshot.confidence == nil)
    }

    @Test func rawValueIsThePoseMeasureAndNilWhenNotMeasurable() {
        let body = Body(.kneeExtension, side: .right, value: 33)
        var analyzer = MotionAnalyzer(exercise: .kneeExtension, side: .right)
        let pose = body.pose(at: 1)
        _ = analyzer.process(pose)
        #expect(analyzer.rawValue == Measure.seatedKneeExtension.value(in: pose, side: .right))
        #expect(abs((analyzer.rawValue ?? 0) - 33) < 1e-9)
        _ = analyzer.process(Pose(timestamp: 2))
        #expect(analyzer.rawValue == nil)
        #expect(analyzer.snapshot.value == nil)
    }
}
