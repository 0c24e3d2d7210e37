import Testing

@testable import KinesiaMotion

struct AnalyzerBaselineTests {
    @Test func theBaselineIsTheHighestPeakAmongTheFirstCleanReps() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        for peak in [90.0, 130, 110, 150] {
            script.rep(peak: peak)
            script.hold(0, for: 0.5)
        }
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        analyzer.startBaseline()
        #expect(analyzer.snapshot.baseline == BaselineProgress(completed: 0, target: 3, value: nil))
        var events: [MotionEvent] = []
        var progress: [Int] = []
        for pose in script.poses {
            events += analyzer.process(pose)
            if progress.last != analyzer.snapshot.baseline?.completed {
                progress.append(analyzer.snapshot.baseline?.completed ?? -1)
            }
        }
        #expect(progress == [0, 1, 2, 3])
        let reps = events.compactMap(\.rep)
        try #require(reps.count == 4)
        let completions = events.compactMap {
            if case .baselineCompleted(let value) = $0 { value } else { nil }
        }
        #expect(completions == [reps[1].peak])
        // Announced right after the rep that completes it.
        let index = try #require(events.firstIndex(of: .baselineCompleted(reps[1].peak)))
        #expect(events[index - 1] == .repCompleted(reps[2]))
        let baseline = try #require(analyzer.snapshot.baseline)
        #expect(baseline.isComplete)
        #expect(baseline.value == reps[1].peak)
        #expect(baseline.completed == 3)
    }

    @Test func rejectedRepsDoNotCountTowardsTheBaseline() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.rep(peak: 150, duration: 3) { body, fraction in
            if fraction > 0.3, fraction < 0.7 { body.trunkLean = 30 }
        }
        script.rep(peak: 110)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .shoulderFlexion) {
            $0.startBaseline(reps: 2)
        }
        let completions = events.compactMap {
            if case .baselineCompleted(let value) = $0 { value } else { nil }
        }
        #expect(completions.count == 1)
        #expect(completions.allSatisfy { $0 > 105 && $0 < 111 })
        #expect(analyzer.snapshot.rejectedCount == 1)
    }

    @Test func aBaselineOfHoldsUsesCompletedHolds() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 95, over: 1)
        script.hold(95, for: 31)
        script.ramp(from: 95, to: 0, over: 1)
        let (analyzer, events) = analyze(script.poses, exercise: .wallSit) { $0.startBaseline(reps: 1) }
        #expect(
            events.contains {
                if case .baselineCompleted(let value) = $0 { abs(value - 95) < 1 } else { false }
            })
        #expect(analyzer.snapshot.baseline?.isComplete == true)
    }

    @Test func theDefaultBaselineTargetComesFromTheExercise() {
        var exercise = Exercise.kneeFlexion
        exercise.sessionRules.baselineReps = 5
        var analyzer = MotionAnalyzer(exercise: exercise, side: .right)
        analyzer.startBaseline()
        #expect(analyzer.snapshot.baseline?.target == 5)
        analyzer.startBaseline(reps: 0)
        #expect(analyzer.snapshot.baseline?.target == 1)
    }

    @Test func resetClearsCountsBestRepsAndBaselineButKeepsVisibility() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.hold(0, for: 0.5)
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        analyzer.startBaseline()
        for pose in script.poses { _ = analyzer.process(pose) }
        #expect(analyzer.snapshot.repCount == 1)
        analyzer.reset()
        #expect(analyzer.snapshot.repCount == 0)
        #expect(analyzer.snapshot.rejectedCount == 0)
        #expect(analyzer.snapshot.best == 0)
        #expect(analyzer.snapshot.lastRep == nil)
        #expect(analyzer.snapshot.baseline == nil)
        #expect(analyzer.snapshot.isVisible)
        #expect(analyzer.snapshot.value != nil)

        // Counting goes on after a reset at rest, without a new visibility event.
        var more = PoseScript(.shoulderFlexion)
        more.gap(script.time)
        more.rep(peak: 90)
        more.hold(0, for: 0.5)
        var events: [MotionEvent] = []
        for pose in more.poses { events += analyzer.process(pose) }
        #expect(events.compactMap(\.rep).count == 1)
        #expect(events.allSatisfy { $0.isCounting })
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func aResetMidRepDropsTheRepAndWaitsForRest() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.rep(peak: 100, duration: 2)
        script.hold(0, for: 0.5)
        var analyzer = MotionAnalyzer(exercise: .shoulderFlexion, side: .left)
        var events: [MotionEvent] = []
        for pose in script.poses {
            events += analyzer.process(pose)
            if abs(pose.timestamp - 2) < 1e-9 { analyzer.reset() }
        }
        #expect(events.compactMap(\.rep).isEmpty)
        #expect(analyzer.snapshot.repCount == 0)
    }

    @Test func nobodyInViewLeavesSetupIssuesAsTheyWere() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1) { body, _ in body.scale = 0.3 }
        script.empty(for: 2)
        let (analyzer, events) = analyze(script.poses, exercise: .shoulderFlexion)
        let setups = events.filter { if case .setupChanged = $0 { true } else { false } }
        #expect(setups == [.setupChanged([.tooFar])])
        #expect(analyzer.snapshot.setupIssues == [.tooFar])
    }
}
