import Testing

@testable import KinesiaMotion

struct AnalyzerHoldTests {
    /// Runs the script through a wall-sit analyzer, recording the hold progress per pose.
    private func run(_ script: PoseScript) -> (
        analyzer: MotionAnalyzer, events: [MotionEvent], progress: [Double?]
    ) {
        var analyzer = MotionAnalyzer(exercise: .wallSit, side: .left)
        var events: [MotionEvent] = []
        var progress: [Double?] = []
        for pose in script.poses {
            events += analyzer.process(pose)
            progress.append(analyzer.snapshot.holdProgress)
        }
        return (analyzer, events, progress)
    }

    @Test func aCompletedHoldCountsAsARepWithItsPeakAndDuration() throws {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 31)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        let (analyzer, events, progress) = run(script)
        let counting = events.filter(\.isCounting)
        try #require(counting.count == 2, "\(counting)")
        #expect(counting[0] == .holdStarted)
        let rep = try #require(counting[1].rep)
        #expect(counting[1] == .repCompleted(rep))
        #expect(abs(rep.duration - 30) < 1e-9)
        #expect(abs(rep.peak - 90) < 1)
        #expect(analyzer.snapshot.repCount == 1)
        // Progress runs from 0 up to 1, monotonically, and is nil before and after.
        let during = progress.compactMap { $0 }
        #expect(during.first == 0)
        #expect(during.last == 1)
        #expect(zip(during, during.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(progress.first == .some(nil))
        #expect(progress.last == .some(nil))
        #expect(analyzer.snapshot.holdProgress == nil)
    }

    @Test func progressReachesOneWhenTheHoldCompletesAndStaysThereUntilThePatientComesOut() throws {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 40)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        var analyzer = MotionAnalyzer(exercise: .wallSit, side: .left)
        var completed: Int?
        var progress: [Double?] = []
        for (index, pose) in script.poses.enumerated() {
            if analyzer.process(pose).contains(where: { $0.rep != nil }) { completed = index }
            progress.append(analyzer.snapshot.holdProgress)
        }
        let end = try #require(completed)
        // The pose before the completion is short of 1; the completing pose fills the bar.
        #expect(try #require(progress[end - 1]) < 1)
        #expect(progress[end] == 1)
        // Still in the position until the ramp down (42 s): full.
        let stillHolding = progress.indices.filter { index in
            index > end && script.poses[index].timestamp < 42
        }
        #expect(stillHolding.count > 200)
        #expect(stillHolding.allSatisfy { progress[$0] == 1 })
        // Out of the position: nil, and it stays nil.
        let cleared = try #require(progress.indices.first { $0 > end && progress[$0] == nil })
        #expect(script.poses[cleared].timestamp > 42)
        #expect(progress[cleared...].allSatisfy { $0 == nil })
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func aCompletedHoldsProgressEndsWhenThePatientLeavesTheView() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 31)
        script.empty(for: 5)
        let (analyzer, events, progress) = run(script)
        #expect(events.filter(\.isCounting).count == 2)
        #expect(progress.contains(1))
        #expect(progress.last == .some(nil))
        #expect(analyzer.snapshot.holdProgress == nil)
    }

    @Test func progressIsTheElapsedFractionOfTheHold() throws {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 15)
        var analyzer = MotionAnalyzer(exercise: .wallSit, side: .left)
        var started: Double?
        for pose in script.poses where !analyzer.process(pose).filter({ $0 == .holdStarted }).isEmpty {
            started = pose.timestamp
        }
        let start = try #require(started)
        let last = try #require(script.poses.last?.timestamp)
        let progress = try #require(analyzer.snapshot.holdProgress)
        #expect(abs(progress - (last - start) / 30) < 1e-9)
    }

    @Test func droppingBelowTheBreakLevelForAThirdOfASecondBreaksTheHold() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 10)
        script.ramp(from: 90, to: 40, over: 0.2)
        script.hold(40, for: 1)
        script.ramp(from: 40, to: 0, over: 0.5)
        script.hold(0, for: 1)
        let (analyzer, events, progress) = run(script)
        #expect(events.filter(\.isCounting) == [.holdStarted])
        #expect(analyzer.snapshot.repCount == 0)
        #expect(analyzer.snapshot.rejectedCount == 0)
        #expect(analyzer.snapshot.lastRep == nil)
        #expect(progress.last == .some(nil))
    }

    @Test func aShortDipOrADipAboveTheBreakLevelDoesNotBreakTheHold() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 8)
        // A single bad frame far below (an outlier) and 0.2 s below the break level.
        script.hold(30, for: 1 / 30)
        script.hold(90, for: 2)
        script.hold(60, for: 0.2)
        script.hold(90, for: 8)
        // Several seconds at 72: under the threshold (75), above the break level (70).
        script.hold(72, for: 4)
        script.hold(90, for: 10)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        let (analyzer, events, _) = run(script)
        #expect(events.filter(\.isCounting).first == .holdStarted)
        #expect(events.filter { $0 == .holdStarted }.count == 1)
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func aBrokenHoldCanBeStartedAgain() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 5)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 31)
        script.ramp(from: 90, to: 0, over: 1)
        let (analyzer, events, _) = run(script)
        #expect(events.filter { $0 == .holdStarted }.count == 2)
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func aHoldWithAFaultIsRejectedWhenItCompletes() throws {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 31) { body, fraction in
            if fraction > 0.2, fraction < 0.25 { body.trunkLean = 30 }
        }
        script.ramp(from: 90, to: 0, over: 1)
        let (analyzer, events, _) = run(script)
        let counting = events.filter(\.isCounting)
        try #require(counting.count == 3, "\(counting)")
        #expect(counting[0] == .holdStarted)
        #expect(counting[1] == .formFault(.keepTrunkUpright))
        let rep = try #require(counting[2].rep)
        #expect(counting[2] == .repRejected(rep))
        #expect(rep.faults == [.keepTrunkUpright])
        #expect(analyzer.snapshot.rejectedCount == 1)
        #expect(analyzer.snapshot.repCount == 0)
    }

    @Test func startingInTheHoldPositionCountsNothingUntilThePatientComesOut() {
        var script = PoseScript(.wallSit)
        script.hold(90, for: 35)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        let (analyzer, events, _) = run(script)
        #expect(events.filter(\.isCounting).isEmpty)
        #expect(analyzer.snapshot.repCount == 0)
    }

    @Test func afterACompletedHoldAnotherNeedsThePatientToComeOutFirst() {
        var script = PoseScript(.wallSit)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 65)
        script.ramp(from: 90, to: 0, over: 1)
        let (analyzer, events, _) = run(script)
        #expect(events.filter { $0 == .holdStarted }.count == 1)
        #expect(analyzer.snapshot.repCount == 1)
    }
}
