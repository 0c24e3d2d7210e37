import Foundation
import Testing

@testable import KinesiaMotion

struct AnalyzerVisibilityTests {
    /// Processes `poses`; returns every event with the timestamp of the pose that emitted it.
    private func timed(
        _ poses: [Pose], exercise: Exercise = .shoulderFlexion
    ) -> (analyzer: MotionAnalyzer, events: [(time: Double, event: MotionEvent)]) {
        var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
        var events: [(time: Double, event: MotionEvent)] = []
        for pose in poses {
            for event in analyzer.process(pose) { events.append((pose.timestamp, event)) }
        }
        return (analyzer, events)
    }

    private static let visible = MotionEvent.visibilityChanged(Visibility(isVisible: true, missingJoints: []))

    @Test func theJointsComingIntoViewAreReportedAfterAThirdOfASecond() throws {
        var script = PoseScript(.shoulderFlexion)
        script.empty(for: 1)
        script.hold(0, for: 1)
        let (analyzer, events) = timed(script.poses)
        let visibility = events.filter { if case .visibilityChanged = $0.event { true } else { false } }
        try #require(visibility.count == 1)
        #expect(visibility[0].event == Self.visible)
        // First seen at t = 1; reported 0.3 s later, on the frame at 1.3 s.
        #expect(abs(visibility[0].time - 1.3) < 1e-9)
        #expect(analyzer.snapshot.isVisible)
        #expect(analyzer.snapshot.missingJoints.isEmpty)
    }

    @Test func emptyPosesMakeThePatientNotVisible() throws {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.empty(for: 1)
        let (analyzer, events) = timed(script.poses)
        let required = MotionAnalyzer(exercise: .shoulderFlexion, side: .left).requiredJoints
        let visibility = events.compactMap { if case .visibilityChanged(let v) = $0.event { v } else { nil } }
        #expect(
            visibility == [
                Visibility(isVisible: true, missingJoints: []),
                Visibility(isVisible: false, missingJoints: required),
            ])
        #expect(!analyzer.snapshot.isVisible)
        #expect(analyzer.snapshot.missingJoints == required)
        #expect(analyzer.snapshot.value == nil)
    }

    @Test func aFlickerShorterThanTheDebounceIsNotReported() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.empty(for: 0.2)
        script.hold(0, for: 0.5)
        script.custom(0.25) { time in
            var pose = Body(.shoulderFlexion, side: .left, value: 0).pose(at: time)
            pose.points[.leftWrist] = nil
            return pose
        }
        script.hold(0, for: 1)
        let (_, events) = timed(script.poses)
        #expect(events.map(\.event) == [Self.visible])
    }

    @Test func missingJointsAreListedInJointOrder() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.custom(1) { time in
            var pose = Body(.shoulderFlexion, side: .left, value: 0).pose(at: time)
            pose.points[.leftWrist] = nil
            pose.points[.neck] = nil
            pose.points[.rightKnee] = nil  // not required: not reported
            return pose
        }
        let (analyzer, events) = timed(script.poses)
        let expected = Visibility(isVisible: false, missingJoints: [.neck, .leftWrist])
        #expect(events.map(\.event) == [Self.visible, .visibilityChanged(expected)])
        #expect(analyzer.snapshot.missingJoints == [.neck, .leftWrist])
    }

    /// A body for `exercise` changed by `change`, held for `seconds` after a clean second.
    private func setup(
        _ exercise: Exercise, for seconds: Double = 1, change: @escaping (inout Body) -> Void
    ) -> (analyzer: MotionAnalyzer, events: [(time: Double, event: MotionEvent)]) {
        var script = PoseScript(exercise)
        script.hold(0, for: 1)
        script.hold(0, for: seconds) { body, _ in change(&body) }
        return timed(script.poses, exercise: exercise)
    }

    private func setupEvents(_ events: [(time: Double, event: MotionEvent)]) -> [(
        time: Double, issues: Set<SetupIssue>
    )] {
        events.compactMap { if case .setupChanged(let issues) = $0.event { ($0.time, issues) } else { nil } }
    }

    @Test func aPatientTooFarAwayIsReported() throws {
        let (analyzer, events) = setup(.shoulderFlexion) { $0.scale = 0.3 }
        let changes = setupEvents(events)
        try #require(changes.count == 1)
        #expect(changes[0].issues == [.tooFar])
        #expect(abs(changes[0].time - 1.5) < 1e-9)
        #expect(analyzer.snapshot.setupIssues == [.tooFar])
    }

    @Test func aJointNearTheEdgeIsTooClose() {
        // Ankles at y 995: not required for shoulder flexion, required for a squat.
        let (analyzer, _) = setup(.shoulderFlexion) { $0.offset = CGPoint(x: 0, y: 35) }
        #expect(analyzer.snapshot.setupIssues.isEmpty)
        let (arm, _) = setup(.shoulderFlexion) { $0.offset = CGPoint(x: -495, y: 0) }
        #expect(arm.snapshot.setupIssues == [.tooClose])
        let (squat, _) = setup(.squat) { $0.offset = CGPoint(x: 0, y: 35) }
        #expect(squat.snapshot.setupIssues == [.tooClose])
    }

    @Test func aSideExerciseSeenFromTheFrontAsksToTurnSideways() {
        let (analyzer, _) = setup(.shoulderFlexion) { $0.view = .front }
        #expect(analyzer.snapshot.setupIssues == [.turnSideways])
    }

    @Test func aFrontExerciseSeenFromTheSideAsksToFaceTheCamera() {
        let (analyzer, _) = setup(.hipAbduction) { $0.view = .side }
        #expect(analyzer.snapshot.setupIssues == [.faceCamera])
        // Either view suits elbow flexion.
        let (elbow, _) = setup(.elbowFlexion) { $0.view = .front }
        #expect(elbow.snapshot.setupIssues.isEmpty)
    }

    @Test func lowMeanConfidenceOfTheRequiredJointsIsReported() {
        let (analyzer, _) = setup(.shoulderFlexion) { $0.confidence = 0.4 }
        #expect(analyzer.snapshot.setupIssues == [.lowConfidence])
        // Without confidence figures there is nothing to judge.
        let (none, _) = setup(.shoulderFlexion) { $0.confidence = nil }
        #expect(none.snapshot.setupIssues.isEmpty)
    }

    @Test func frameIssuesNeedTheImageSize() {
        let (analyzer, events) = setup(.shoulderFlexion) {
            $0.scale = 0.3
            $0.imageSize = nil
        }
        #expect(analyzer.snapshot.setupIssues.isEmpty)
        #expect(setupEvents(events).isEmpty)
    }

    @Test func severalIssuesAreReportedTogether() {
        let (analyzer, _) = setup(.shoulderFlexion) {
            $0.scale = 0.3
            $0.view = .front
            $0.confidence = 0.2
        }
        #expect(analyzer.snapshot.setupIssues == [.tooFar, .turnSideways, .lowConfidence])
    }

    @Test func setupChangesAreDebouncedHalfASecondBothWays() {
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        script.hold(0, for: 0.4) { body, _ in body.scale = 0.3 }  // too short
        script.hold(0, for: 1)
        script.hold(0, for: 1) { body, _ in body.scale = 0.3 }
        script.hold(0, for: 0.4)  // too short
        script.hold(0, for: 1) { body, _ in body.scale = 0.3 }
        script.hold(0, for: 1)
        let (analyzer, events) = timed(script.poses)
        let changes = setupEvents(events)
        #expect(changes.map(\.issues) == [[.tooFar], []])
        #expect(changes.first.map { abs($0.time - 2.9) < 1e-9 } == true)
        #expect(changes.last.map { abs($0.time - 5.3) < 1e-9 } == true)
        #expect(analyzer.snapshot.setupIssues.isEmpty)
    }
}
