// The user's API contract (`seeds/*.txt`), compiled nearly verbatim: every name and signature
// the seeds use must exist with the public import alone (no `@testable`), and behave as the
// seeds say. SwiftUI and the camera are not on Linux: the Hud builds the same strings without
// views, and a list of poses stands in for `VisionPoseProvider`.
import Foundation
import KinesiaMotion
import KinesiaTestSupport
import Observation
import Synchronization
import Testing

// MARK: - The seeds' own code

/// `events-and-snapshot`: "Snapshot: for drawing". The Hud's expressions, verbatim, as strings.
@MainActor
struct Hud {
    let session: MotionSession

    var body: [String] {
        let s = session.snapshot
        var lines: [String] = []
        lines.append(s.value.map { "\(Int($0))°" } ?? "—")
        lines.append("\(s.repCount) clean · \(s.rejectedCount) rejected")
        if let progress = s.holdProgress {
            lines.append("progress \(progress)")
        }
        if !s.isVisible {
            lines.append("Show: \(s.missingJoints.map(\.rawValue).joined(separator: ", "))")
        }
        return lines
    }
}

/// `events-and-snapshot`: "Correction texts", verbatim (an exhaustive switch over the optional:
/// it stops compiling if a case is added or removed).
func text(for fault: FormFeedback?) -> String {
    switch fault {
    case .keepUpperArmStill: "Keep your upper arm by your side"
    case .keepThighStill: "Keep your thigh still"
    case .keepElbowStraight: "Straighten your elbow"
    case .keepTrunkUpright: "Keep your trunk upright"
    case .keepShouldersLevel: "Level your shoulders"
    case .keepKneeStraight: "Straighten your knee"
    case .keepHipsLevel: "Level your hips"
    case nil: "Watch your form"
    }
}

/// The seeds call `text(for: issue)` on a ``SetupIssue`` too; this is the app's side of it.
func text(for issue: SetupIssue) -> String {
    switch issue {
    case .tooFar: "Come closer"
    case .tooClose: "Step back"
    case .turnSideways: "Turn sideways"
    case .faceCamera: "Face the camera"
    case .lowConfidence: "More light, please"
    }
}

/// What the seeds' listener talks to: records what it was asked to do.
@MainActor
final class Feedback {
    var said: [String] = []
    var successes = 0
    var baselines: [Double] = []

    func say(_ text: String) { said.append(text) }
    func success() { successes += 1 }
}

/// `events-and-snapshot`: "Events: for reacting", the loop verbatim (`haptics`, `voice` and
/// `saveBaseline` are the test's recorder).
@MainActor
func listen(to session: MotionSession, feedback: Feedback) async {
    let haptics = feedback
    let voice = feedback
    func saveBaseline(_ value: Double) { feedback.baselines.append(value) }

    for await event in session.events() {
        switch event {
        case .repCompleted(let rep):
            haptics.success()
            voice.say("\(Int(rep.peak)) degrees")
        case .repRejected(let rep):
            voice.say(text(for: rep.faults.first))
        case .formFault(let fault):
            voice.say(text(for: fault))  // live cue
        case .holdStarted:
            voice.say("Hold it")
        case .visibilityChanged(let v):
            voice.say(v.isVisible ? "I can see you" : "I can't see all of you")
        case .setupChanged(let issues):
            if let issue = issues.first { voice.say(text(for: issue)) }
        case .baselineCompleted(let value):
            saveBaseline(value)
        }
    }
}

/// Counts observation callbacks (they may run on any thread).
final class ChangeCounter: Sendable {
    private let state = Mutex(0)
    var value: Int { state.withLock { $0 } }
    func count() { state.withLock { $0 += 1 } }
}

// MARK: - Tests

@MainActor
// A guard against a hang, not a timing: its tests run on the cooperative pool the whole test
// process shares (two threads here), so the time it counts includes the queueing.
@Suite(.timeLimit(.minutes(3)))
struct SeedContractTests {
    /// A front-view session: the patient walks in, does a clean rep, a rep with the trunk
    /// leaning, then stands too far away and leaves.
    private static func abductionSet() -> [Pose] {
        var script = PoseScript(.shoulderAbduction, side: .left)
        script.empty(for: 0.5)
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.rep(peak: 110, duration: 3) { body, fraction in
            if fraction > 0.3, fraction < 0.7 { body.trunkLean = 30 }
        }
        script.hold(0, for: 1) { body, _ in body.scale = 0.2 }
        script.empty(for: 1)
        return script.poses
    }

    /// A wall sit held for its 30 seconds.
    private static func wallSit() -> [Pose] {
        var script = PoseScript(.wallSit, side: .right)
        script.hold(0, for: 1)
        script.ramp(from: 0, to: 90, over: 1)
        script.hold(90, for: 31)
        script.ramp(from: 90, to: 0, over: 1)
        script.hold(0, for: 1)
        return script.poses
    }

    // MARK: The pose contract (pose-contract.pt)

    @Test func poseHasTheSeedsFieldsWithTheirTypes() {
        // `public var` fields of the seeds' declaration, with their exact types.
        let points: WritableKeyPath<Pose, [Joint: CGPoint]> = \Pose.points
        let timestamp: WritableKeyPath<Pose, TimeInterval> = \Pose.timestamp
        let imageSize: WritableKeyPath<Pose, CGSize?> = \Pose.imageSize
        let confidence: WritableKeyPath<Pose, [Joint: Double]> = \Pose.confidence
        var pose = Pose(timestamp: 0)
        pose[keyPath: points] = [.rightElbow: CGPoint(x: 320, y: 240)]
        pose[keyPath: timestamp] = 1.5
        pose[keyPath: imageSize] = CGSize(width: 480, height: 640)
        pose[keyPath: confidence] = [.rightElbow: 0.8]
        #expect(pose.points[.rightElbow] == CGPoint(x: 320, y: 240))
        #expect(pose.timestamp == 1.5)
        #expect(pose.imageSize == CGSize(width: 480, height: 640))
        #expect(pose.confidence == [.rightElbow: 0.8])
        func requireSendable(_: some Sendable) {}
        requireSendable(pose)
    }

    @Test func readingAPoseAsTheSeedsDo() {
        let pose = Pose(
            points: [
                .rightShoulder: CGPoint(x: 300, y: 200), .rightElbow: CGPoint(x: 320, y: 300),
                .leftKnee: CGPoint(x: 280, y: 500),
            ],
            timestamp: 3, imageSize: CGSize(width: 480, height: 640),
            confidence: [.rightShoulder: 0.9, .rightElbow: 0.6, .rightWrist: 0.2, .leftKnee: 0.1])
        var printed: [CGPoint] = []
        if let elbow = pose[.rightElbow] {
            printed.append(elbow)  // CGPoint in pixels
        }
        #expect(printed == [CGPoint(x: 320, y: 300)])
        #expect(pose[.rightWrist] == nil)
        // "The lowest confidence among the visible ones, or nil": the wrist is not visible, so
        // its 0.2 does not count.
        #expect(pose.confidence(of: [.rightShoulder, .rightElbow, .rightWrist]) == 0.6)
        #expect(pose.confidence(of: [.rightWrist, .leftWrist]) == nil)
        // "confidence is optional": without figures, confidence metrics are nil.
        let bare = Pose(points: pose.points, timestamp: 3)
        #expect(bare.confidence(of: [.rightShoulder, .rightElbow]) == nil)
    }

    @Test func theNineteenJointsWithStableRawValues() {
        #expect(
            Joint.allCases.map(\.rawValue) == [
                "nose", "leftEye", "rightEye", "leftEar", "rightEar", "neck", "root",
                "leftShoulder", "rightShoulder", "leftElbow", "rightElbow", "leftWrist", "rightWrist",
                "leftHip", "rightHip", "leftKnee", "rightKnee", "leftAnkle", "rightAnkle",
            ])
        #expect(Joint(rawValue: "leftElbow") == .leftElbow)
    }

    @Test(arguments: BodySide.allCases)
    func everyPairedJointHasASideHelper(side: BodySide) {
        let helpers: [(BodySide) -> Joint] = [
            Joint.eye, Joint.ear, Joint.shoulder, Joint.elbow, Joint.wrist, Joint.hip, Joint.knee,
            Joint.ankle,
        ]
        let joints = helpers.map { $0(side) }
        // Every joint of the side, once: the helpers cover all 16 paired joints between them.
        #expect(Set(joints) == Set(Joint.allCases.filter { $0.side == side }))
        #expect(joints.allSatisfy { $0.rawValue.hasPrefix(side.rawValue) })
        #expect(Joint.knee(.left) == .leftKnee)
        #expect(Joint.shoulder(side) == (side == .left ? .leftShoulder : .rightShoulder))
        #expect(BodySide.right.opposite == .left)
        #expect(side.opposite.opposite == side)
        #expect(side.opposite != side)
    }

    @Test func anEmptyPoseTellsTheSessionThePatientLeft() {
        let session = MotionSession(exercise: .shoulderFlexion, side: .left)
        var script = PoseScript(.shoulderFlexion)
        script.hold(0, for: 1)
        var events: [MotionEvent] = []
        for pose in script.poses { events += session.process(pose) }
        #expect(session.snapshot.isVisible)
        for index in 0..<15 {
            events += session.process(Pose(timestamp: 1 + Double(index) / 30))
        }
        #expect(!session.snapshot.isVisible)
        #expect(session.snapshot.missingJoints == [.neck, .root, .leftShoulder, .leftElbow, .leftWrist])
        #expect(
            events.last
                == .visibilityChanged(
                    Visibility(isVisible: false, missingJoints: session.snapshot.missingJoints)))
    }

    @Test func withoutConfidenceFiguresTheConfidenceMetricsAreNil() {
        let session = MotionSession(exercise: .squat, side: .left)
        var body = Body(.squat, side: .left, value: 10)
        body.confidence = nil
        for index in 0..<30 { session.process(body.pose(at: Double(index) / 30)) }
        #expect(session.snapshot.value != nil)
        #expect(session.snapshot.confidence == nil)
        #expect(!session.snapshot.setupIssues.contains(.lowConfidence))
    }

    // MARK: Events and snapshot (events-and-snapshot.en / .pt)

    @Test func theSnapshotHasEveryFieldOfTheSeedsTableWithItsType() {
        let snapshot = MotionSnapshot()
        let _: Double? = snapshot.value
        let _: Double = snapshot.best
        let _: Int = snapshot.repCount
        let _: Int = snapshot.rejectedCount
        let _: Rep? = snapshot.lastRep
        let _: Double? = snapshot.holdProgress
        let _: Double? = snapshot.confidence
        let _: Set<SetupIssue> = snapshot.setupIssues
        let _: Bool = snapshot.isVisible
        let _: [Joint] = snapshot.missingJoints
        let _: Bool = snapshot.isRunning
        let _: BaselineProgress? = snapshot.baseline
        // Nothing measured yet.
        #expect(snapshot.value == nil)
        #expect(snapshot.repCount == 0 && snapshot.rejectedCount == 0)
        #expect(snapshot.setupIssues.isEmpty)
    }

    @Test func theHudDrawsFromTheSnapshot() {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        #expect(
            Hud(session: session).body == [
                "—", "0 clean · 0 rejected",
                "Show: neck, root, leftShoulder, rightShoulder, leftElbow, leftWrist",
            ])
        // 0.5 s nobody, then 1 s at rest.
        for pose in Self.abductionSet().prefix(45) { session.process(pose) }
        // In view and at rest: the value shows, no "Show:" line.
        #expect(Hud(session: session).body == ["0°", "0 clean · 0 rejected"])
        for pose in Self.abductionSet().dropFirst(45) { session.process(pose) }
        // Gone: no value, the counts stay, every required joint is asked for.
        #expect(
            Hud(session: session).body == [
                "—", "1 clean · 1 rejected",
                "Show: neck, root, leftShoulder, rightShoulder, leftElbow, leftWrist",
            ])
    }

    @Test func theHudShowsHoldProgress() throws {
        let session = MotionSession(exercise: .wallSit, side: .right)
        let poses = Self.wallSit()
        // Half-way through the hold (it starts about 1.9 s in).
        for pose in poses where pose.timestamp < 17 { session.process(pose) }
        let progress = try #require(session.snapshot.holdProgress)
        #expect((0.45...0.55).contains(progress))
        #expect(Hud(session: session).body.contains("progress \(progress)"))
    }

    @Test func theSnapshotIsObservable() {
        let session = MotionSession(exercise: .squat, side: .left)
        let changes = ChangeCounter()
        withObservationTracking {
            _ = session.snapshot
        } onChange: {
            changes.count()
        }
        session.process(Body(.squat, side: .left, value: 10).pose(at: 0))
        #expect(changes.value == 1)
        #expect(session.snapshot.value != nil)
        // A pose that changes nothing (here, bad input) does not invalidate views.
        let needless = ChangeCounter()
        withObservationTracking {
            _ = session.snapshot
        } onChange: {
            needless.count()
        }
        session.process(Body(.squat, side: .left, value: 10).pose(at: 0))
        #expect(needless.value == 0)
    }

    @Test func theSeedsListenerReactsToEveryEvent() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        session.startBaseline(reps: 1)
        let feedback = Feedback()
        let listener = Task { @MainActor in await listen(to: session, feedback: feedback) }
        // The listener subscribes on its first run; give it the chance before any event.
        await Task.yield()
        var returned: [MotionEvent] = []
        for pose in Self.abductionSet() { returned += session.process(pose) }
        #expect(
            returned.map(\.name) == [
                "visibilityChanged", "repCompleted", "baselineCompleted", "formFault", "repRejected",
                "setupChanged", "visibilityChanged",
            ])
        let expectedSpeech = [
            "I can see you", "99 degrees", "Keep your trunk upright", "Keep your trunk upright",
            "Come closer", "I can't see all of you",
        ]
        // The listener runs on the main actor, which the suite's main-actor tests share: a
        // fresh-clone CI run had it five cues in after 10 s (the whole test took 84 s there).
        #expect(
            await waitUntil(timeout: .seconds(45)) {
                feedback.said.count >= expectedSpeech.count && !feedback.baselines.isEmpty
            })
        #expect(feedback.said == expectedSpeech)
        #expect(feedback.successes == 1)
        #expect(feedback.baselines == [session.snapshot.baseline?.value ?? -1])
        // "The stream ends when the listener stops iterating": cancelling its task ends the loop.
        listener.cancel()
        await listener.value
    }

    @Test func theSeedsListenerSaysHoldIt() async {
        let session = MotionSession(exercise: .wallSit, side: .right)
        let feedback = Feedback()
        let listener = Task { @MainActor in await listen(to: session, feedback: feedback) }
        await Task.yield()
        for pose in Self.wallSit() { session.process(pose) }
        // The listener runs on the main actor, shared with the suite's main-actor tests (as in
        // theSeedsListenerReactsToEveryEvent): a fresh-clone CI run had it two cues in after 10 s.
        #expect(await waitUntil(timeout: .seconds(45)) { feedback.said.count >= 3 })
        let peak = session.snapshot.lastRep?.peak ?? 0
        #expect(abs(peak - 90) < 0.5)
        #expect(feedback.said == ["I can see you", "Hold it", "\(Int(peak)) degrees"])
        #expect(session.snapshot.repCount == 1)
        listener.cancel()
        await listener.value
    }

    @Test func eachCallerGetsItsOwnStreamAndStoppingOneLeavesTheOthers() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let first = session.events()
        let second = session.events()
        let quitter = Task { @MainActor in
            for await _ in session.events() { break }
        }
        await Task.yield()
        var returned: [MotionEvent] = []
        for pose in Self.abductionSet() { returned += session.process(pose) }
        await quitter.value
        var a: [MotionEvent] = []
        for await event in first {
            a.append(event)
            if a.count == returned.count { break }
        }
        var b: [MotionEvent] = []
        for await event in second {
            b.append(event)
            if b.count == returned.count { break }
        }
        #expect(a == returned)
        #expect(b == returned)
    }

    @Test func processReturnsThatFramesEventsAndEmitsThem() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let stream = session.events()
        var perPose: [[MotionEvent]] = []
        for pose in Self.abductionSet() {
            let events = session.process(pose)
            perPose.append(events)
        }
        let all = perPose.flatMap { $0 }
        // Six poses had events: in view, clean rep, fault, rejected rep, too far, gone.
        #expect(perPose.filter { !$0.isEmpty }.count == 6)
        var received: [MotionEvent] = []
        for await event in stream {
            received.append(event)
            if received.count == all.count { break }
        }
        #expect(received == all)
    }

    @Test func runReadsUntilTheSourceEnds() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        await session.run(with: PoseList(frames: Self.abductionSet()))
        #expect(session.snapshot.repCount == 1)
        #expect(session.snapshot.rejectedCount == 1)
        #expect(!session.snapshot.isRunning)
        #expect(session.snapshot.lastRep?.faults.first == .keepTrunkUpright)
    }

    @Test func startAndStopAsTheSeedsDo() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let camera = PoseList(frames: Self.abductionSet())
        session.start(with: camera)  // turns on
        #expect(session.snapshot.isRunning)
        #expect(await waitUntil(timeout: .seconds(120)) { !session.snapshot.isRunning })
        #expect(session.snapshot.repCount == 1)
        session.start(with: EndlessProvider())
        #expect(session.snapshot.isRunning)
        session.stop()  // turns off
        #expect(!session.snapshot.isRunning)
    }

    @Test func bothSidesWithOneCameraFromOneLoop() async {
        var script = PoseScript(.shoulderAbduction, side: .left)
        script.hold(0, for: 1)
        script.rep(peak: 100) { body, fraction in
            body.right.armElevation = 120 * (1 - cos(2 * .pi * fraction)) / 2
        }
        script.rep(peak: 100) { body, _ in body.right.armElevation = 0 }
        script.hold(0, for: 1)
        let camera = PoseList(frames: script.poses)
        let exercise = Exercise.shoulderAbduction

        let left = MotionSession(exercise: exercise, side: .left)
        let right = MotionSession(exercise: exercise, side: .right)

        let task = Task { @MainActor in
            for await pose in camera.poses() {
                left.process(pose)
                right.process(pose)
            }
        }
        await task.value
        #expect(left.snapshot.repCount == 2)
        #expect(right.snapshot.repCount == 1)
        #expect((right.snapshot.lastRep?.peak ?? 0) > 115)
        // To end a live loop: task.cancel().
        task.cancel()
    }

    @Test func theSevenEventsAndTheRepTheyCarry() {
        let rep = Rep(peak: 92.4, faults: [.keepElbowStraight], start: 1, end: 3.5)
        let events: [MotionEvent] = [
            .repCompleted(rep), .repRejected(rep), .holdStarted, .formFault(.keepHipsLevel),
            .visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftKnee])),
            .setupChanged([.tooFar]), .baselineCompleted(92.4),
        ]
        #expect(
            events.map(\.name) == [
                "repCompleted", "repRejected", "holdStarted", "formFault", "visibilityChanged",
                "setupChanged", "baselineCompleted",
            ])
        #expect(Int(rep.peak) == 92)
        #expect(rep.faults.first == .keepElbowStraight)
        #expect(rep.start == 1 && rep.end == 3.5)
        #expect(text(for: rep.faults.first) == "Straighten your elbow")
        #expect(text(for: nil) == "Watch your form")
    }

    @Test func feedbackAndSetupIssuesHaveStableRawValues() {
        #expect(
            FormFeedback.allCases.map(\.rawValue) == [
                "keepUpperArmStill", "keepThighStill", "keepElbowStraight", "keepTrunkUpright",
                "keepShouldersLevel", "keepKneeStraight", "keepHipsLevel",
            ])
        #expect(
            SetupIssue.allCases.map(\.rawValue) == [
                "tooFar", "tooClose", "turnSideways", "faceCamera", "lowConfidence",
            ])
    }

    @Test func theBaselineProgressesInTheSnapshot() {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        session.startBaseline()
        #expect(session.snapshot.baseline == BaselineProgress(completed: 0, target: 3, value: nil))
        var script = PoseScript(.shoulderAbduction)
        script.hold(0, for: 1)
        script.rep(peak: 90)
        script.rep(peak: 120)
        script.rep(peak: 100)
        var baselines: [Double] = []
        for pose in script.poses {
            for case .baselineCompleted(let value) in session.process(pose) { baselines.append(value) }
        }
        let baseline = session.snapshot.baseline
        #expect(baseline?.completed == 3)
        #expect(baseline?.isComplete == true)
        #expect(baselines.count == 1)
        // The highest peak among the three reps.
        #expect(baselines.first == baseline?.value)
        #expect(abs((baseline?.value ?? 0) - 120) < 2)
    }
}
