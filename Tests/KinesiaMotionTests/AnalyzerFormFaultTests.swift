import Testing

@testable import KinesiaMotion

/// One form rule of one catalog exercise, as a test argument.
struct RuleCase: Sendable, CustomTestStringConvertible {
    let exercise: Exercise
    let rule: FormRule

    var testDescription: String { "\(exercise.id).\(rule.fault.rawValue)" }

    static let all: [RuleCase] = Exercise.catalog.flatMap { exercise in
        exercise.formRules.map { RuleCase(exercise: exercise, rule: $0) }
    }
}

struct AnalyzerFormFaultTests {
    /// Rest, then one rep (or hold) during whose middle `adjust` applies, then rest.
    private func attempt(
        _ exercise: Exercise, side: BodySide = .left, repeats: Int = 1,
        adjust: @escaping (inout Body, Double) -> Void
    ) -> [Pose] {
        var script = PoseScript(exercise, side: side)
        let peak = PoseScript.cleanPeak(exercise)
        script.hold(0, for: 1)
        for _ in 0..<repeats {
            switch exercise.kind {
            case .reps:
                script.rep(peak: peak, duration: 3, adjust: adjust)
            case .hold(_, let seconds):
                script.ramp(from: 0, to: peak, over: 1)
                script.hold(peak, for: seconds + 0.5, adjust: adjust)
                script.ramp(from: peak, to: 0, over: 1)
            }
            script.hold(0, for: 1)
        }
        return script.poses
    }

    @Test(arguments: RuleCase.all, BodySide.allCases)
    func everyFaultIsEmittedOnceAndRejectsTheRep(ruleCase: RuleCase, side: BodySide) throws {
        let rule = ruleCase.rule
        // Broken through the middle of the rep (well over 0.25 s), not at its start or end.
        let poses = attempt(ruleCase.exercise, side: side) { body, fraction in
            if fraction > 0.3, fraction < 0.6 { body.breakRule(rule, side: side) }
        }
        let (analyzer, events) = analyze(poses, exercise: ruleCase.exercise, side: side)
        let counting = events.filter(\.isCounting)
        let faults = counting.filter { if case .formFault = $0 { true } else { false } }
        #expect(faults == [.formFault(rule.fault)], "\(counting)")
        let rep = try #require(counting.compactMap(\.rep).first)
        #expect(counting.last == .repRejected(rep))
        #expect(rep.faults == [rule.fault])
        #expect(analyzer.snapshot.rejectedCount == 1)
        #expect(analyzer.snapshot.repCount == 0)
        #expect(analyzer.snapshot.lastRep == rep)
    }

    @Test(arguments: RuleCase.all)
    func aRuleBrokenForLessThanAQuarterSecondIsNotAFault(ruleCase: RuleCase) {
        let rule = ruleCase.rule
        let seconds: Double
        if case .hold(_, let duration) = ruleCase.exercise.kind {
            seconds = duration + 0.5
        } else {
            seconds = 3
        }
        // 0.2 s of the attempt.
        let window = 0.2 / seconds
        let poses = attempt(ruleCase.exercise) { body, fraction in
            if fraction >= 0.4, fraction < 0.4 + window { body.breakRule(rule, side: .left) }
        }
        let (analyzer, events) = analyze(poses, exercise: ruleCase.exercise)
        #expect(!events.contains { if case .formFault = $0 { true } else { false } })
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func aFaultIsEmittedAQuarterSecondAfterTheRuleBreaks() throws {
        var script = PoseScript(.squat)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        let broken = script.time
        script.hold(90, for: 1) { body, _ in body.trunkLean = 60 }
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        var analyzer = MotionAnalyzer(exercise: .squat, side: .left)
        var faultTime: Double?
        for pose in script.poses where analyzer.process(pose).contains(.formFault(.keepTrunkUpright)) {
            faultTime = pose.timestamp
        }
        let time = try #require(faultTime)
        #expect(time >= broken + 0.25 - 1e-9 && time < broken + 0.25 + 1 / 30 + 1e-9, "\(time)")
        #expect(analyzer.snapshot.rejectedCount == 1)
    }

    @Test func aFaultIsReportedOncePerRepAndFault() {
        let exercise = Exercise.shoulderAbduction
        // Each of three reps breaks two rules; the elbow bends twice in each rep.
        let poses = attempt(exercise, repeats: 3) { body, fraction in
            if (0.2..<0.35).contains(fraction) || (0.5..<0.65).contains(fraction) {
                body.breakRule(exercise.formRules[0], side: .left)
            }
            if (0.4..<0.7).contains(fraction) { body.breakRule(exercise.formRules[2], side: .left) }
        }
        let (analyzer, events) = analyze(poses, exercise: exercise)
        let oneRep: [MotionEvent] = [.formFault(.keepElbowStraight), .formFault(.keepShouldersLevel)]
        let faults = events.filter { if case .formFault = $0 { true } else { false } }
        #expect(faults == oneRep + oneRep + oneRep)
        #expect(analyzer.snapshot.rejectedCount == 3)
        #expect(
            events.compactMap(\.rep).allSatisfy { $0.faults == [.keepElbowStraight, .keepShouldersLevel] })
    }

    @Test func rulesAreNotCheckedOutsideARep() {
        let exercise = Exercise.shoulderFlexion
        var script = PoseScript(exercise)
        // Leaning and bending the elbow at rest, then a clean rep.
        script.hold(0, for: 2) { body, _ in
            body.trunkLean = 40
            body.left.elbowFlexion = 80
        }
        script.hold(0, for: 1)
        script.rep(peak: 90)
        script.hold(0, for: 1)
        let (analyzer, events) = analyze(script.poses, exercise: exercise)
        #expect(!events.contains { if case .formFault = $0 { true } else { false } })
        #expect(analyzer.snapshot.repCount == 1)
    }

    @Test func driftRulesCompareTheChangeSinceTheRepStarted() {
        let exercise = Exercise.elbowFlexion
        var script = PoseScript(exercise)
        // The upper arm is held 40 degrees forward all along: not a drift, so clean.
        script.hold(0, for: 1) { body, _ in body.left.armElevation = 40 }
        script.rep(peak: 100, duration: 2) { body, _ in body.left.armElevation = 40 }
        script.hold(0, for: 1) { body, _ in body.left.armElevation = 40 }
        // Then a rep that starts there and moves the upper arm by 25 degrees.
        script.rep(peak: 100, duration: 2) { body, fraction in
            body.left.armElevation = fraction > 0.3 ? 65 : 40
        }
        script.hold(0, for: 1) { body, _ in body.left.armElevation = 40 }
        let (analyzer, events) = analyze(script.poses, exercise: exercise)
        let reps = events.compactMap(\.rep)
        #expect(reps.map(\.faults) == [[], [.keepUpperArmStill]])
        #expect(analyzer.snapshot.repCount == 1)
        #expect(analyzer.snapshot.rejectedCount == 1)
    }

    @Test func driftBelowTheLimitIsClean() {
        let exercise = Exercise.kneeFlexion
        var script = PoseScript(exercise)
        script.hold(0, for: 1)
        // The thigh moves 12 degrees (limit 15).
        script.rep(peak: 90, duration: 2) { body, fraction in body.left.thighAngle = 12 * fraction }
        script.hold(0, for: 1) { body, _ in body.left.thighAngle = 12 }
        let (analyzer, _) = analyze(script.poses, exercise: exercise)
        #expect(analyzer.snapshot.repCount == 1)
        #expect(analyzer.snapshot.rejectedCount == 0)
    }

    @Test func aRuleWhoseJointsAreMissingIsNotBroken() {
        let exercise = Exercise.shoulderFlexion
        var script = PoseScript(exercise)
        script.hold(0, for: 1)
        // The wrist is not seen during the rep: elbow flexion cannot be judged, nothing is wrong.
        script.rep(peak: 90)
        script.hold(0, for: 1)
        let poses = script.poses.map { pose in
            var pose = pose
            if pose.timestamp > 1.2, pose.timestamp < 2.8 {
                pose.points[.leftWrist] = nil
                pose.confidence[.leftWrist] = nil
            }
            return pose
        }
        let (analyzer, events) = analyze(poses, exercise: exercise)
        #expect(!events.contains { if case .formFault = $0 { true } else { false } })
        #expect(analyzer.snapshot.repCount == 1)
    }
}
