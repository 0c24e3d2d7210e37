import Testing

@testable import KinesiaMotion

struct AnalyzerRepTests {
    @Test(arguments: Exercise.catalog, BodySide.allCases)
    func countsACleanRepOfEveryCatalogExercise(exercise: Exercise, side: BodySide) throws {
        var script = PoseScript(exercise, side: side)
        let peak = PoseScript.cleanPeak(exercise)
        script.hold(0, for: 1)
        switch exercise.kind {
        case .reps:
            script.rep(peak: peak, duration: 2)
        case .hold(_, let seconds):
            script.ramp(from: 0, to: peak, over: 1)
            script.hold(peak, for: seconds + 1)
            script.ramp(from: peak, to: 0, over: 1)
        }
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: exercise, side: side)

        let counting = events.filter(\.isCounting)
        let reps = counting.compactMap(\.rep)
        try #require(reps.count == 1, "\(counting)")
        #expect(counting.last == .repCompleted(reps[0]))
        #expect(!counting.contains { if case .formFault = $0 { true } else { false } })
        #expect(reps[0].isClean)
        // Smoothing costs a little of the peak, never more than a few degrees.
        #expect(abs(reps[0].peak - peak) < 3, "peak \(reps[0].peak) for \(peak)")
        #expect(analyzer.snapshot.repCount == 1)
        #expect(analyzer.snapshot.rejectedCount == 0)
        #expect(analyzer.snapshot.lastRep == reps[0])
        #expect(abs(analyzer.snapshot.best - reps[0].peak) < 1e-9)
        #expect(analyzer.snapshot.isVisible)
        #expect(analyzer.snapshot.setupIssues.isEmpty)
        // A clean scene: the only other events are the joints coming into view.
        #expect(
            events.filter { !$0.isCounting } == [
                .visibilityChanged(Visibility(isVisible: true, missingJoints: []))
            ])
    }

    @Test func repStartsAtTheStartLevelAndEndsAtTheEndLevel() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 0.5)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        let (_, events) = analyze(script.poses, exercise: .shoulderFlexion)
        let rep = try #require(events.compactMap(\.rep).first)
        // Raw crosses 30 at 1 + 1/3 s and 20 at 2.5 + 7/9 s; smoothing delays each a little.
        #expect(rep.start > 1.33 && rep.start < 1.6, "start \(rep.start)")
        #expect(rep.end > 3.27 && rep.end < 3.6, "end \(rep.end)")
        #expect(rep.peak > 88 && rep.peak <= 90)
    }

    @Test func countsEveryRepOfASet() {
        var script = PoseScript(.elbowFlexion)
        script.hold(0, for: 1)
        for peak in [100.0, 110, 95, 120, 105] {
            script.rep(peak: peak, duration: 1.5)
            script.hold(0, for: 0.5)
        }
        let (analyzer, events) = analyze(script.poses, exercise: .elbowFlexion)
        #expect(analyzer.snapshot.repCount == 5)
        let peaks = events.compactMap(\.rep).map(\.peak)
        #expect(peaks.count == 5)
        #expect(zip(peaks, [100.0, 110, 95, 120, 105]).allSatisfy { abs($0 - $1) < 4 }, "\(peaks)")
        #expect(abs(analyzer.snapshot.best - (peaks.max() ?? 0)) < 1e-9)
    }

    @Test func startingMidMovementCountsNothingUntilTheValueIsBackAtTheEnd() {
        var script = PoseScript(.shoulderFlexion)
        // Already at 80 degrees when the session starts, comes down, then does one real rep.
        script.hold(80, for: 0.5)
        script.ramp(from: 80, to: 0, over: 1)
        script.hold(0, for: 1)
        script.rep(peak: 90)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .shoulderFlexion)
        #expect(analyzer.snapshot.repCount == 1)
        #expect(events.compactMap(\.rep).count == 1)
        #expect((events.compactMap(\.rep).first?.start ?? 0) > 2.5)
    }

    @Test func startingBetweenEndAndStartNeedsTheEndLevelFirst() {
        var script = PoseScript(.shoulderFlexion)
        // 25 degrees: above end (20), below start (30). Up to 90 and back counts nothing.
        script.hold(25, for: 0.5)
        script.rep(peak: 90, rest: 25)
        script.ramp(from: 25, to: 0, over: 0.5)
        script.rep(peak: 90)
        script.hold(0, for: 1)
        let (analyzer, _) = analyze(script.poses, exercise: .shoulderFlexion)
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func repShorterThanHalfASecondIsDroppedWithoutAnEvent() {
        var script = PoseScript(.ankleDorsiflexion)
        script.hold(0, for: 1)
        script.rep(peak: 40, duration: 0.4)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .ankleDorsiflexion)
        #expect(events.filter(\.isCounting).isEmpty)
        #expect(analyzer.snapshot.repCount == 0)
        #expect(analyzer.snapshot.rejectedCount == 0)
        #expect(analyzer.snapshot.lastRep == nil)
        // The value did rise: best saw it.
        #expect(analyzer.snapshot.best > 10)
    }

    @Test func repLongerThanThirtySecondsIsDroppedWithoutAnEvent() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 31)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        script.rep(peak: 90)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .shoulderFlexion)
        // Only the second, normal rep counts.
        #expect(events.compactMap(\.rep).count == 1)
        #expect(analyzer.snapshot.repCount == 1)
        #expect((analyzer.snapshot.lastRep?.start ?? 0) > 34)
    }

    @Test func repWhosePeakIsBelowTheMinimumIsDroppedWithoutAnEvent() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 50, duration: 2)  // minimum peak 60
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .shoulderFlexion)
        #expect(events.filter(\.isCounting).isEmpty)
        #expect(analyzer.snapshot.repCount == 0)
        #expect(analyzer.snapshot.rejectedCount == 0)
    }

    @Test func therapistThresholdsAreHonoured() {
        var exercise = Exercise.shoulderFlexion
        exercise.kind = .reps(start: 30, end: 20, minPeak: 100)
        var script = PoseScript(exercise)
        script.hold(0, for: 1)
        script.rep(peak: 90)
        script.rep(peak: 120)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: exercise)
        #expect(analyzer.snapshot.repCount == 1)
        #expect((events.compactMap(\.rep).first?.peak ?? 0) > 115)
    }

    @Test func requiredJointsAreTheMeasureAndRuleJointsOfTheSide() {
        let analyzer = MotionAnalyzer(exercise: .shoulderAbduction, side: .right)
        #expect(
            analyzer.requiredJoints == [
                .neck, .root, .leftShoulder, .rightShoulder, .rightElbow, .rightWrist,
            ])
        #expect(analyzer.snapshot.missingJoints == analyzer.requiredJoints)
        #expect(!analyzer.snapshot.isVisible)
        #expect(!analyzer.snapshot.isRunning)
    }
}
