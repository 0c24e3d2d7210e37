import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

struct AnalyzerBadInputTests {
    /// A clean session: rest, two clean reps, a faulty rep, rest, people leaving and returning.
    private static func cleanPoses(_ exercise: Exercise = .shoulderAbduction) -> [Pose] {
        var script = PoseScript(exercise)
        script.empty(for: 0.5)
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.rep(peak: 120, duration: 2.5)
        script.rep(peak: 110, duration: 3) { body, fraction in
            if fraction > 0.3, fraction < 0.7 { body.breakRule(exercise.formRules[0], side: .left) }
        }
        script.hold(0, for: 1)
        script.empty(for: 1)
        script.hold(0, for: 1) { body, _ in body.scale = 0.3 }
        return script.poses
    }

    /// Bad variants of `pose`, to be inserted right after it (its successor is after `next`).
    private static func badPoses(after pose: Pose, next: Double, previous: Double) -> [(
        Pose, PoseRejections.Reason
    )] {
        let between = (pose.timestamp + next) / 2
        var bad: [(Pose, PoseRejections.Reason)] = []
        func variant(_ reason: PoseRejections.Reason, _ change: (inout Pose) -> Void) {
            var copy = pose
            copy.timestamp = between
            change(&copy)
            bad.append((copy, reason))
        }
        variant(.nonFinite) { $0.points[.leftElbow] = CGPoint(x: Double.nan, y: 10) }
        variant(.nonFinite) { $0.points[.neck] = CGPoint(x: 10, y: Double.infinity) }
        variant(.nonFinite) { $0.points[.rightKnee] = CGPoint(x: -Double.infinity, y: Double.nan) }
        variant(.nonFinite) { $0.timestamp = .nan }
        variant(.nonFinite) { $0.timestamp = .infinity }
        variant(.nonFinite) { $0.timestamp = -.infinity }
        variant(.nonFinite) { $0.confidence[.leftShoulder] = .nan }
        variant(.nonFinite) { $0.confidence[.root] = .infinity }
        variant(.nonFinite) { $0.imageSize = CGSize(width: Double.nan, height: 1000) }
        variant(.absurdCoordinates) { $0.points[.leftWrist] = CGPoint(x: 10_001, y: 500) }
        variant(.absurdCoordinates) { $0.points[.leftWrist] = CGPoint(x: 500, y: -10_001) }
        variant(.absurdCoordinates) {
            $0.imageSize = nil
            $0.points[.leftHip] = CGPoint(x: 2e6, y: 500)
        }
        variant(.absurdCoordinates) { $0.points[.nose] = CGPoint(x: Double.greatestFiniteMagnitude, y: 0) }
        variant(.timestampNotIncreasing) { $0.timestamp = pose.timestamp }  // repeats
        variant(.timestampNotIncreasing) { $0.timestamp = previous }  // goes back
        variant(.absurdTimestamp) { $0.timestamp = -1e300 }
        variant(.absurdTimestamp) { $0.timestamp = 1e300 }
        variant(.absurdTimestamp) { $0.timestamp = 1.7e18 }  // nanoseconds since 1970
        variant(.timestampNotIncreasing) {
            $0.timestamp = pose.timestamp - 0.5
            $0.points = [:]
        }
        return bad
    }

    @Test(arguments: [Exercise.shoulderAbduction, .elbowFlexion, .wallSit])
    func badPosesInterleavedChangeNothing(exercise: Exercise) {
        let clean = Self.cleanPoses(exercise)
        let (reference, referenceEvents) = analyze(clean, exercise: exercise)
        #expect(reference.rejectedPoses.total == 0)

        var mixed: [Pose] = []
        var expected = PoseRejections()
        for (index, pose) in clean.enumerated() {
            mixed.append(pose)
            guard index % 7 == 3, index + 1 < clean.count, index > 0 else { continue }
            let bad = Self.badPoses(
                after: pose, next: clean[index + 1].timestamp, previous: clean[index - 1].timestamp)
            let (badPose, reason) = bad[(index / 7) % bad.count]
            mixed.append(badPose)
            expected.record(reason)
        }
        var analyzer = MotionAnalyzer(exercise: exercise, side: .left)
        var events: [MotionEvent] = []
        for pose in mixed {
            let before = analyzer.snapshot
            let produced = analyzer.process(pose)
            events += produced
            if !clean.contains(pose) {
                #expect(produced.isEmpty)
                #expect(analyzer.snapshot == before)
            }
        }
        #expect(events == referenceEvents)
        #expect(analyzer.snapshot == reference.snapshot)
        #expect(analyzer.rejectedPoses == expected)
        #expect(expected.total > 20)
    }

    @Test func everyKindOfBadPoseIsCountedUnderItsReason() {
        let clean = Self.cleanPoses()
        var analyzer = MotionAnalyzer(exercise: .shoulderAbduction, side: .left)
        _ = analyzer.process(clean[20])
        let bad = Self.badPoses(after: clean[20], next: clean[21].timestamp, previous: clean[19].timestamp)
        var expected = PoseRejections()
        for (pose, reason) in bad {
            let before = analyzer.snapshot
            #expect(analyzer.process(pose).isEmpty)
            expected.record(reason)
            #expect(analyzer.rejectedPoses == expected, "\(reason)")
            #expect(analyzer.snapshot == before)
        }
        #expect(expected.nonFinite == 9)
        #expect(expected.absurdCoordinates == 4)
        #expect(expected.timestampNotIncreasing == 3)
        #expect(expected.absurdTimestamp == 3)
        #expect(expected.total == bad.count)
        #expect(expected[.nonFinite] == 9)
        // The stream goes on.
        #expect(analyzer.process(clean[21]).isEmpty)
        #expect(analyzer.rejectedPoses.total == bad.count)
    }

    /// Why the pose contract drops `pose` (non-finite values, a timestamp beyond ±10^10 s,
    /// coordinates beyond 10^6 or ten image sizes, a timestamp not after `last`), written from
    /// the contract's text, independently of the analyzer's own check.
    static func expectedRejection(_ pose: Pose, after last: Double?) -> PoseRejections.Reason? {
        let values =
            [pose.timestamp] + pose.points.values.flatMap { [Double($0.x), Double($0.y)] }
            + pose.confidence.values + (pose.imageSize.map { [Double($0.width), Double($0.height)] } ?? [])
        guard pose.timestamp.isFinite else { return .nonFinite }
        guard abs(pose.timestamp) <= 1e10 else { return .absurdTimestamp }
        guard values.allSatisfy(\.isFinite) else { return .nonFinite }
        var limitX = 1e6
        var limitY = 1e6
        if let size = pose.imageSize, size.width > 0, size.height > 0 {
            limitX = min(limitX, Double(size.width) * 10)
            limitY = min(limitY, Double(size.height) * 10)
        }
        if pose.points.values.contains(where: { abs(Double($0.x)) > limitX || abs(Double($0.y)) > limitY }) {
            return .absurdCoordinates
        }
        if let last, !(pose.timestamp > last) { return .timestampNotIncreasing }
        return nil
    }

    /// The contract's time rule for a sound pose at `time`, written from its text: not after
    /// the last accepted pose's, it is dropped; a pose held (more than 2 s after the last
    /// accepted one) is analysed when this one is later still, else dropped as an outlier; this
    /// one is held in turn when it is more than 2 s after the last accepted pose.
    struct TimeModel {
        var lastAccepted: Double?
        var held: Double?

        /// The reasons counted for this pose (its own, or its held predecessor's).
        mutating func observe(_ time: Double) -> [PoseRejections.Reason] {
            if let lastAccepted, !(time > lastAccepted) { return [.timestampNotIncreasing] }
            var reasons: [PoseRejections.Reason] = []
            if let held {
                self.held = nil
                if time > held { lastAccepted = held } else { reasons.append(.timestampOutlier) }
            }
            if let lastAccepted, time - lastAccepted > 2 { held = time } else { lastAccepted = time }
            return reasons
        }
    }

    /// Random poses mixing plausible numbers with NaN, infinities, huge and tiny values,
    /// missing joints and sizes, and timestamps that jump, repeat or go back: the analyzer
    /// drops exactly the poses the contract says, counts each under its reason, and everything
    /// it reports stays finite and consistent.
    @Test(arguments: Exercise.catalog)
    func randomGarbageKeepsEveryInvariant(exercise: Exercise) async {
        await offCooperativePool(.computing) {
            var generator = SplitMix64(seed: 42 &+ UInt64(exercise.id.count))
            let specials: [Double] = [
                .nan, .infinity, -.infinity, 0, -0.0, 1e308, -1e308, .leastNonzeroMagnitude, 1e6, -1e6, 500,
                2e10,
            ]
            func number() -> Double {
                generator.next() % 3 == 0
                    ? specials[Int(generator.next() % UInt64(specials.count))]
                    : (generator.unit() - 0.3) * 2000
            }
            var analyzer = MotionAnalyzer(exercise: exercise, side: .right)
            let required = Set(analyzer.requiredJoints)
            var expected = PoseRejections()
            var model = TimeModel()
            var time = 0.0
            var completed = 0
            var rejectedReps = 0
            for _ in 0..<1500 {
                var points: [Joint: CGPoint] = [:]
                var confidence: [Joint: Double] = [:]
                // One pose in four has garbage among its points; the others get through.
                let garbage = generator.next() % 4 == 0
                for joint in Joint.allCases where generator.next() % 4 != 0 {
                    let sound = !garbage || generator.next() % 3 != 0
                    points[joint] =
                        sound
                        ? CGPoint(x: generator.unit() * 640, y: generator.unit() * 480)
                        : CGPoint(x: number(), y: number())
                    if generator.next() % 2 == 0 { confidence[joint] = sound ? generator.unit() : number() }
                }
                // Time mostly moves on; one pose in five has a garbage timestamp of its own (NaN,
                // infinite, huge, zero, negative, back in time or far ahead).
                time += 1.0 / 30
                let timestamp = generator.next() % 5 == 0 ? number() : time
                let size =
                    generator.next() % 3 == 0
                    ? nil : CGSize(width: 640, height: generator.next() % 9 == 0 ? number() : 480)
                let pose = Pose(points: points, timestamp: timestamp, imageSize: size, confidence: confidence)
                if let reason = Self.expectedRejection(pose, after: nil) {
                    expected.record(reason)
                } else {
                    for reason in model.observe(timestamp) { expected.record(reason) }
                    // A jump that later poses confirmed: the clock goes on from there.
                    time = max(time, model.lastAccepted ?? time)
                }
                let events = analyzer.process(pose)
                for event in events {
                    switch event {
                    case .repCompleted(let rep), .repRejected(let rep):
                        if case .repCompleted = event { completed += 1 } else { rejectedReps += 1 }
                        #expect(rep.peak.isFinite && rep.start.isFinite && rep.end.isFinite, "\(rep)")
                        #expect(rep.start <= rep.end, "\(rep)")
                    case .baselineCompleted(let value):
                        #expect(value.isFinite)
                    case .visibilityChanged(let visibility):
                        #expect(Set(visibility.missingJoints).isSubset(of: required), "\(visibility)")
                    default:
                        break
                    }
                }
                let snapshot = analyzer.snapshot
                let numbers = [
                    snapshot.value, snapshot.best, snapshot.holdProgress, snapshot.confidence,
                    snapshot.baseline?.value,
                ]
                #expect(numbers.allSatisfy { $0?.isFinite ?? true }, "\(snapshot)")
                if let rep = snapshot.lastRep {
                    #expect(rep.peak.isFinite && rep.start.isFinite && rep.end.isFinite)
                }
                #expect(Set(snapshot.missingJoints).isSubset(of: required), "\(snapshot.missingJoints)")
                #expect(snapshot.repCount == completed)
                #expect(snapshot.rejectedCount == rejectedReps)
            }
            // The end of the poses drops a pose still held.
            analyzer.finish()
            if model.held != nil { expected.record(.timestampOutlier) }
            // Every dropped pose is counted, under the contract's reason, and nothing else is.
            #expect(analyzer.rejectedPoses == expected)
            #expect(
                PoseRejections.Reason.allCases.map { analyzer.rejectedPoses[$0] }.reduce(0, +)
                    == expected.total)
            // The garbage exercised every reason and let most poses through.
            #expect(PoseRejections.Reason.allCases.allSatisfy { expected[$0] > 0 }, "\(expected)")
            #expect(expected.total < 1000, "\(expected)")
        }
    }

    @Test func emptyPosesAloneNeverCountAnything() {
        var analyzer = MotionAnalyzer(exercise: .squat, side: .left)
        for index in 0..<300 {
            #expect(analyzer.process(Pose(timestamp: Double(index) / 30)).isEmpty)
        }
        var expected = MotionSnapshot()
        expected.missingJoints = analyzer.requiredJoints
        #expect(analyzer.snapshot == expected)
    }

    @Test(arguments: Exercise.catalog)
    func theSamePosesGiveTheSameEvents(exercise: Exercise) {
        var script = PoseScript(exercise)
        script.empty(for: 0.5)
        script.hold(0, for: 1)
        script.rep(peak: PoseScript.cleanPeak(exercise))
        script.rep(peak: PoseScript.cleanPeak(exercise), duration: 3) { body, fraction in
            if fraction > 0.4, let rule = exercise.formRules.first { body.breakRule(rule, side: .left) }
        }
        script.hold(0, for: 1) { body, _ in body.scale = 0.3 }
        var generator = SplitMix64(seed: 3)
        let noisy = script.poses.map { pose in
            var pose = pose
            pose.points = pose.points.mapValues {
                CGPoint(x: $0.x + (generator.unit() - 0.5) * 6, y: $0.y + (generator.unit() - 0.5) * 6)
            }
            return pose
        }
        let first = analyze(noisy, exercise: exercise)
        let second = analyze(noisy, exercise: exercise)
        #expect(!first.events.isEmpty)
        #expect(first.events == second.events)
        #expect(first.analyzer.snapshot == second.analyzer.snapshot)
        // A copy of an analyzer mid-stream goes on exactly like the original.
        var original = MotionAnalyzer(exercise: exercise, side: .left)
        for pose in noisy.prefix(60) { _ = original.process(pose) }
        var copy = original
        var a: [MotionEvent] = []
        var b: [MotionEvent] = []
        for pose in noisy.dropFirst(60) {
            a += original.process(pose)
            b += copy.process(pose)
        }
        #expect(a == b)
    }
}
