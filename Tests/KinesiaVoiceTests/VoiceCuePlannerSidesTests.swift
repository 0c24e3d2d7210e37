import KinesiaMotion
import KinesiaTestSupport
import Testing

@testable import KinesiaVoice

/// A voice following both sides of one camera, as a patient doing a two-sided exercise hears
/// it: no I/O, time is a value (the events' pose time) advanced by hand.
struct VoiceCuePlannerSidesTests {
    let english = try! VoiceTexts.builtIn(.english)
    let bothSides = VoiceCuePlanner.Following.sessions(["left", "right"])

    func clean(end: Double) -> MotionEvent {
        .repCompleted(Rep(peak: 120, faults: [], start: end - 1.5, end: end))
    }

    func rejected(end: Double, _ fault: FormFeedback) -> MotionEvent {
        .repRejected(Rep(peak: 110, faults: [fault], start: end - 1.5, end: end))
    }

    func spoken(_ actions: [VoiceCuePlanner.Action]) -> [String] {
        actions.compactMap { if case .speak(let cue) = $0 { cue.text } else { nil } }
    }

    func dropped(_ actions: [VoiceCuePlanner.Action]) -> [String] {
        actions.compactMap { if case .drop(let cue, _) = $0 { cue.text } else { nil } }
    }

    /// Enqueues one event and says what the planner chooses right away (the voice was free).
    func say(_ planner: inout VoiceCuePlanner, _ event: MotionEvent, _ session: String, at t: Double)
        -> [String]
    {
        _ = planner.enqueue(event, session: session, at: t)
        defer { planner.finishedSpeaking() }
        return spoken(planner.nextCue(at: t))
    }

    @Test func aVoiceFollowingOneSessionNamesNoSide() {
        var planner = VoiceCuePlanner(texts: english, following: .sessions(["left"]))
        #expect(!planner.namesSides)
        #expect(say(&planner, clean(end: 2), "left", at: 2) == ["1"])
        #expect(
            say(&planner, rejected(end: 5, .keepElbowStraight), "left", at: 5)
                == ["That one does not count. Straighten your elbow"])
        #expect(say(&planner, .formFault(.keepElbowStraight), "left", at: 12) == ["Straighten your elbow"])
    }

    @Test func withBothSidesEveryCueOfOneSideNamesIt() {
        var planner = VoiceCuePlanner(texts: english, following: bothSides)
        #expect(planner.namesSides)
        #expect(say(&planner, clean(end: 2), "left", at: 2) == ["Left, 1"])
        #expect(say(&planner, clean(end: 3), "right", at: 3) == ["Right, 1"])
        #expect(say(&planner, clean(end: 4), "left", at: 4) == ["Left, 2"])
        #expect(
            say(&planner, rejected(end: 6, .keepElbowStraight), "right", at: 6)
                == ["Right side: that one does not count. Straighten your elbow"])
        #expect(say(&planner, .holdStarted, "left", at: 8) == ["Left side, hold it"])
        #expect(
            say(&planner, .repCompleted(Rep(peak: 90, faults: [], start: 8, end: 38)), "left", at: 38)
                == ["Left side, well held, 30 seconds"])
        #expect(
            say(&planner, .baselineCompleted(131.4), "right", at: 40) == [
                "Right side, your baseline is 131 degrees"
            ])
    }

    @Test(arguments: VoiceLanguage.allCases)
    func theSidesAreNamedInEveryLanguage(_ language: VoiceLanguage) throws {
        var planner = VoiceCuePlanner(texts: try .builtIn(language), following: bothSides)
        let said =
            say(&planner, clean(end: 2), "left", at: 2)
            + say(&planner, rejected(end: 4, .keepElbowStraight), "right", at: 4)
            + say(&planner, .formFault(.keepKneeStraight), "left", at: 6)
        let expected: [VoiceLanguage: [String]] = [
            .english: [
                "Left, 1", "Right side: that one does not count. Straighten your elbow",
                "Left side: Straighten your knee",
            ],
            .brazilianPortuguese: [
                "Esquerda, 1", "Direita: essa não conta. Estique o cotovelo", "Esquerda: Estique o joelho",
            ],
            .spanish: [
                "Izquierda, 1", "Derecha: esa no cuenta. Estira el codo", "Izquierda: Estira la rodilla",
            ],
        ]
        #expect(said == expected[language])
    }

    /// The trunk belongs to both sides: its correction names none, and the other side's same
    /// correction just after is not said twice. An elbow belongs to one: each side's is said.
    @Test func aCorrectionOfOneLimbNamesItsSideAndOneOfTheTrunkIsSaidOnceForBoth() {
        var planner = VoiceCuePlanner(texts: english, following: bothSides)
        #expect(say(&planner, .formFault(.keepTrunkUpright), "left", at: 1) == ["Keep your trunk upright"])
        _ = planner.enqueue(.formFault(.keepTrunkUpright), session: "right", at: 1.5)
        #expect(dropped(planner.nextCue(at: 1.5)) == ["Keep your trunk upright"])
        #expect(
            say(&planner, .formFault(.keepElbowStraight), "left", at: 2) == [
                "Left side: Straighten your elbow"
            ])
        #expect(
            say(&planner, .formFault(.keepElbowStraight), "right", at: 2.5) == [
                "Right side: Straighten your elbow"
            ])
        for fault in FormFeedback.allCases {
            #expect(
                fault.concernsOneSide
                    == [.keepElbowStraight, .keepKneeStraight, .keepUpperArmStill, .keepThighStill].contains(
                        fault))
        }
    }

    /// Visibility and placement concern the whole patient: no side, even with both followed.
    @Test func visibilityAndPlacementNameNoSide() {
        var planner = VoiceCuePlanner(texts: english, following: bothSides)
        #expect(say(&planner, .setupChanged([.tooFar]), "left", at: 1) == ["Come closer to the camera"])
        let lost = Visibility(isVisible: false, missingJoints: [.rightElbow, .rightWrist])
        #expect(
            say(&planner, .visibilityChanged(lost), "right", at: 2) == [
                "I can't see your right elbow and right wrist"
            ])
    }

    @Test func followingACameraNamesSidesOnceASecondSessionIsHeard() {
        var planner = VoiceCuePlanner(texts: english)
        #expect(say(&planner, clean(end: 2), "left", at: 2) == ["1"])
        // The right worker's first snapshot.
        planner.heard(from: "right")
        #expect(planner.namesSides)
        #expect(say(&planner, clean(end: 4), "left", at: 4) == ["Left, 2"])
    }

    @Test func aSessionOfAnotherNameIsNamedByItsName() {
        var planner = VoiceCuePlanner(texts: english, following: .sessions(["knee-a", "knee-b"]))
        #expect(planner.sideName(of: "left") == "Left" && planner.sideName(of: "knee-a") == "knee-a")
        #expect(say(&planner, clean(end: 2), "knee-a", at: 2) == ["knee-a, 1"])
    }

    @Test func theFirstSightingIsAGreetingAndAReturnAfterLeavingIsAReturn() {
        var planner = VoiceCuePlanner(texts: english, following: bothSides)
        let visible = MotionEvent.visibilityChanged(Visibility(isVisible: true, missingJoints: []))
        let gone = MotionEvent.visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftWrist]))
        #expect(say(&planner, visible, "left", at: 0.3) == ["I can see you"])
        // The other side, at the same moment: the same greeting, not said twice.
        _ = planner.enqueue(visible, session: "right", at: 0.3)
        #expect(dropped(planner.nextCue(at: 0.3)) == ["I can see you"])
        #expect(say(&planner, gone, "left", at: 10) == ["I can't see your left wrist"])
        #expect(say(&planner, visible, "left", at: 12) == ["I can see you again"])
        // A worker restart starts the counts again, not the acquaintance.
        planner.sessionRestarted("left")
        #expect(say(&planner, visible, "left", at: 30) == ["I can see you again"])
        #expect(say(&planner, clean(end: 31), "left", at: 31) == ["Left, 1"])
    }

    /// Both sides finish a pose together: the right side's correction comes before the left
    /// side's count, whichever worker's messages arrive first, and neither is lost.
    @Test func aFormCueOfOneSideIsNotDroppedOrPutOffForACountOfTheOther() {
        for leftFirst in [true, false] {
            var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: english, following: bothSides))
            var said: [String] = []
            let speak = { (cue: VoiceCue) -> Double in
                said.append(cue.text)
                return 0.8
            }
            var log: [VoiceCuePlanner.Action] = []
            let left = { (timeline: inout VoiceTimeline) in
                log += timeline.receive(self.clean(end: 5), session: "left", at: 5, speak: speak)
                log += timeline.tick(5, session: "left", speak: speak)
            }
            let right = { (timeline: inout VoiceTimeline) in
                log += timeline.receive(.formFault(.keepElbowStraight), session: "right", at: 5, speak: speak)
                log += timeline.tick(5, session: "right", speak: speak)
            }
            _ = timeline.tick(4.9, session: "left", speak: speak)
            _ = timeline.tick(4.9, session: "right", speak: speak)
            if leftFirst {
                left(&timeline)
                right(&timeline)
            } else {
                right(&timeline)
                left(&timeline)
            }
            #expect(said == ["Right side: Straighten your elbow"], "left first: \(leftFirst)")
            log += timeline.tick(5.8, session: "left", speak: speak)
            log += timeline.tick(5.8, session: "right", speak: speak)
            #expect(said == ["Right side: Straighten your elbow", "Left, 1"], "left first: \(leftFirst)")
            #expect(dropped(log).isEmpty)
        }
    }

    /// A count is replaced by the next count of its side while it waits, never said after it;
    /// the other side's counts are kept.
    @Test func aCountIsNeverSpokenAfterTheNextCountOfTheSameSide() {
        var planner = VoiceCuePlanner(texts: english, following: bothSides)
        _ = planner.enqueue(.setupChanged([.tooFar]), session: "left", at: 1)
        #expect(spoken(planner.nextCue(at: 1)) == ["Come closer to the camera"])
        _ = planner.enqueue(clean(end: 1.2), session: "left", at: 1.2)
        _ = planner.enqueue(clean(end: 1.3), session: "right", at: 1.3)
        let replaced = planner.enqueue(clean(end: 1.9), session: "left", at: 1.9)
        #expect(dropped(replaced) == ["Left, 1"])
        planner.finishedSpeaking()
        var said = spoken(planner.nextCue(at: 2.5))
        planner.finishedSpeaking()
        said += spoken(planner.nextCue(at: 3))
        #expect(said == ["Right, 1", "Left, 2"])
    }

    /// Random reps, faults and utterance lengths on both sides, in random interleavings of
    /// the two workers' messages (one at most half a second of poses ahead of the other, as two
    /// live workers of one camera are): each side's counts are said in increasing order, and
    /// the utterances are the same whatever the interleaving.
    @Test(arguments: 0..<40)
    func countsStayInOrderAndTheUtterancesDoNotDependOnTheInterleaving(_ seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed))
        // Each side's messages, in its own order: events then the snapshot of each pose.
        enum Message { case event(MotionEvent, Double), snapshot(Double) }
        var messages: [String: [Message]] = ["left": [], "right": []]
        for session in ["left", "right"] {
            for pose in 1...400 {
                let t = Double(pose) / 30
                let draw = generator.unit()
                if draw < 0.03 {
                    messages[session]!.append(.event(clean(end: t), t))
                } else if draw < 0.04 {
                    messages[session]!.append(.event(rejected(end: t, .keepElbowStraight), t))
                } else if draw < 0.05 {
                    messages[session]!.append(.event(.formFault(.keepTrunkUpright), t))
                }
                messages[session]!.append(.snapshot(t))
            }
        }
        func run(_ generator: inout SplitMix64) -> [VoiceCue] {
            var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: english, following: bothSides))
            var said: [VoiceCue] = []
            let speak = { (cue: VoiceCue) -> Double in
                said.append(cue)
                return 0.3 + Double(cue.text.count) * 0.04
            }
            var next = ["left": 0, "right": 0]
            var reached = ["left": 0.0, "right": 0.0]
            while var session = ["left", "right"].filter({ next[$0]! < messages[$0]!.count }).randomElement(
                using: &generator)
            {
                let other = session == "left" ? "right" : "left"
                if reached[session]! - reached[other]! > 0.5, next[other]! < messages[other]!.count {
                    session = other
                }
                switch messages[session]![next[session]!] {
                case .event(let event, let t):
                    _ = timeline.receive(event, session: session, at: t, speak: speak)
                case .snapshot(let t):
                    _ = timeline.tick(t, session: session, speak: speak)
                    reached[session] = t
                }
                next[session]! += 1
            }
            _ = timeline.finish(speak: speak)
            return said
        }
        let first = run(&generator)
        #expect(first.count > 5)
        for session in ["left", "right"] {
            let counts = first.filter { $0.session == session && $0.subject == .repCounted }.map {
                Int($0.text.split(separator: " ").last!)!
            }
            #expect(counts == counts.sorted() && Set(counts).count == counts.count, "\(session): \(counts)")
        }
        #expect(run(&generator).map(\.text) == first.map(\.text))
    }

    /// A worker that stops (or restarts) is waited for at most ``VoiceTimeline/maximumLag`` of
    /// the other side's pose time: the other side's cues go on.
    @Test func aSessionThatFellBehindIsNotWaitedFor() {
        var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: english, following: bothSides))
        var said: [String] = []
        let speak = { (cue: VoiceCue) -> Double in
            said.append(cue.text)
            return 0.5
        }
        _ = timeline.tick(2, session: "right", speak: speak)
        _ = timeline.receive(clean(end: 2.5), session: "left", at: 2.5, speak: speak)
        _ = timeline.tick(2.5, session: "left", speak: speak)
        // The right side has completed 2 s only: the left's count at 2.5 waits for it.
        #expect(said.isEmpty)
        _ = timeline.tick(3.1, session: "left", speak: speak)
        // 1.1 s behind: no longer waited for; the count is decided at its own pose time.
        #expect(said == ["Left, 1"])
    }
}
