import KinesiaMotion
import Testing

@testable import KinesiaVoice

/// The planner's rules with no I/O: time is the events' pose time.
struct VoiceCuePlannerTests {
    let english = try! VoiceTexts.builtIn(.english)

    func clean(_ peak: Double = 90, end: Double = 2) -> MotionEvent {
        .repCompleted(Rep(peak: peak, faults: [], start: end - 1.5, end: end))
    }

    func spoken(_ actions: [VoiceCuePlanner.Action]) -> [String] {
        actions.compactMap { if case .speak(let cue) = $0 { cue.text } else { nil } }
    }

    func dropped(_ actions: [VoiceCuePlanner.Action]) -> [String] {
        actions.compactMap { if case .drop(let cue, _) = $0 { cue.text } else { nil } }
    }

    @Test func aCleanRepIsCountedAloudAndARejectedOneSaysWhy() {
        var planner = VoiceCuePlanner(texts: english)
        _ = planner.enqueue(clean(), session: "left", at: 2)
        #expect(spoken(planner.nextCue(at: 2)) == ["1"])
        planner.finishedSpeaking()
        _ = planner.enqueue(
            .repRejected(Rep(peak: 70, faults: [.keepTrunkUpright], start: 3, end: 5)), session: "left", at: 5
        )
        #expect(spoken(planner.nextCue(at: 5)) == ["That one does not count. Keep your trunk upright"])
        planner.finishedSpeaking()
        _ = planner.enqueue(clean(end: 8), session: "left", at: 8)
        #expect(spoken(planner.nextCue(at: 8)) == ["2"])
    }

    @Test func neverTalksOverItself() {
        var planner = VoiceCuePlanner(texts: english)
        _ = planner.enqueue(clean(), session: "left", at: 2)
        #expect(spoken(planner.nextCue(at: 2)) == ["1"])
        _ = planner.enqueue(.formFault(.keepTrunkUpright), session: "left", at: 2.1)
        #expect(planner.nextCue(at: 2.2).isEmpty)
        planner.finishedSpeaking()
        #expect(spoken(planner.nextCue(at: 2.3)) == ["Keep your trunk upright"])
    }

    @Test func setupComesBeforeFormBeforeCounts() {
        var planner = VoiceCuePlanner(texts: english)
        _ = planner.enqueue(clean(), session: "left", at: 2)
        _ = planner.enqueue(.formFault(.keepElbowStraight), session: "left", at: 2)
        _ = planner.enqueue(.setupChanged([.lowConfidence, .tooFar]), session: "left", at: 2)
        var said: [String] = []
        for _ in 0..<3 {
            said += spoken(planner.nextCue(at: 2))
            planner.finishedSpeaking()
        }
        #expect(said == ["Come closer to the camera", "Straighten your elbow", "1"])
    }

    @Test func aCueTooOldWhenItCouldBeSpokenIsDropped() {
        var planner = VoiceCuePlanner(texts: english)
        _ = planner.enqueue(.formFault(.keepTrunkUpright), session: "left", at: 1)
        _ = planner.enqueue(clean(end: 1.5), session: "left", at: 1.5)
        #expect(spoken(planner.nextCue(at: 1)) == ["Keep your trunk upright"])
        planner.finishedSpeaking()
        // The count waited 2.5 s: more than the 2 s a progress cue may wait.
        let actions = planner.nextCue(at: 4)
        #expect(
            actions == [
                .drop(
                    VoiceCue(subject: .repCounted, text: "1", session: "left", receivedAt: 1.5),
                    .stale(age: 2.5))
            ])
    }

    @Test func theSameCueIsNotRepeatedWithinFiveSeconds() {
        var planner = VoiceCuePlanner(texts: english)
        _ = planner.enqueue(.formFault(.keepTrunkUpright), session: "left", at: 1)
        #expect(spoken(planner.nextCue(at: 1)) == ["Keep your trunk upright"])
        planner.finishedSpeaking()
        _ = planner.enqueue(.formFault(.keepTrunkUpright), session: "right", at: 3)
        let again = planner.nextCue(at: 3)
        #expect(spoken(again).isEmpty && dropped(again) == ["Keep your trunk upright"])
        _ = planner.enqueue(.formFault(.keepTrunkUpright), session: "left", at: 6.5)
        #expect(spoken(planner.nextCue(at: 6.5)) == ["Keep your trunk upright"])
    }

    /// Both sides exercising: each side's counts are said, never taken for the other's repeats.
    @Test func eachSessionsCountsAreSaidEvenWhenTheOtherSideJustSaidTheSame() {
        var planner = VoiceCuePlanner(texts: english, following: .sessions(["left", "right"]))
        _ = planner.enqueue(clean(end: 2), session: "left", at: 2)
        #expect(spoken(planner.nextCue(at: 2)) == ["Left, 1"])
        planner.finishedSpeaking()
        _ = planner.enqueue(clean(end: 3), session: "right", at: 3)
        #expect(spoken(planner.nextCue(at: 3)) == ["Right, 1"])
        planner.finishedSpeaking()
        // The same session's count is still a repeat within the window (a replayed event).
        #expect(
            VoiceCuePlanner.repeatKey(
                VoiceCue(subject: .repCounted, text: "1", session: "left", receivedAt: 0))
                != VoiceCuePlanner.repeatKey(
                    VoiceCue(subject: .repCounted, text: "1", session: "right", receivedAt: 0)))
    }

    @Test func visibilityLostNamesTheMissingJointsAndANewerStateReplacesIt() {
        var planner = VoiceCuePlanner(texts: english)
        _ = planner.enqueue(clean(), session: "left", at: 2)
        #expect(spoken(planner.nextCue(at: 2)) == ["1"])
        let lost = Visibility(isVisible: false, missingJoints: [.leftHip, .leftKnee, .leftAnkle])
        _ = planner.enqueue(.visibilityChanged(lost), session: "left", at: 2.1)
        #expect(planner.waiting.map(\.text) == ["I can't see your left hip, left knee and left ankle"])
        let replaced = planner.enqueue(
            .visibilityChanged(Visibility(isVisible: true, missingJoints: [])), session: "left", at: 2.4)
        #expect(dropped(replaced) == ["I can't see your left hip, left knee and left ankle"])
        planner.finishedSpeaking()
        #expect(spoken(planner.nextCue(at: 2.5)) == ["I can see you again"])
    }

    @Test func aHoldStartsAndCompletesWithItsLength() {
        var planner = VoiceCuePlanner(texts: try! .builtIn(.brazilianPortuguese))
        _ = planner.enqueue(.holdStarted, session: "s", at: 1)
        #expect(spoken(planner.nextCue(at: 1)) == ["Segure"])
        planner.finishedSpeaking()
        _ = planner.enqueue(
            .repCompleted(Rep(peak: 88, faults: [], start: 1, end: 31.2)), session: "s", at: 31.2)
        #expect(spoken(planner.nextCue(at: 31.2)) == ["Muito bem, 30 segundos"])
        planner.finishedSpeaking()
        // A rep after the hold is counted again as a rep.
        _ = planner.enqueue(clean(end: 40), session: "s", at: 40)
        #expect(spoken(planner.nextCue(at: 40)) == ["2"])
    }

    @Test func theBaselineSaysItsValueAndASetupFixIsAcknowledged() {
        var planner = VoiceCuePlanner(texts: try! .builtIn(.spanish))
        _ = planner.enqueue(.baselineCompleted(112.6), session: "s", at: 1)
        #expect(spoken(planner.nextCue(at: 1)) == ["Tu medición inicial es 113 grados"])
        planner.finishedSpeaking()
        _ = planner.enqueue(.setupChanged([]), session: "s", at: 2)
        #expect(spoken(planner.nextCue(at: 2)) == ["Bien, quédate así"])
    }

    @Test func countsStartAgainWhenTheSessionRestarts() {
        var planner = VoiceCuePlanner(texts: english)
        for end in [2.0, 4.0] {
            _ = planner.enqueue(clean(end: end), session: "left", at: end)
            _ = planner.nextCue(at: end)
            planner.finishedSpeaking()
        }
        planner.sessionRestarted("left")
        _ = planner.enqueue(clean(end: 9), session: "left", at: 9)
        #expect(spoken(planner.nextCue(at: 9)) == ["1"])
    }

    @Test func aFullQueuePushesOutTheLowestRankedOldestCue() {
        var planner = VoiceCuePlanner(texts: english, rules: .init(queueLimit: 2))
        _ = planner.enqueue(.holdStarted, session: "a", at: 1)
        _ = planner.enqueue(.formFault(.keepTrunkUpright), session: "a", at: 1)
        let pushed = planner.enqueue(.formFault(.keepElbowStraight), session: "a", at: 1)
        #expect(pushed.count == 1 && dropped(pushed) == ["Hold it"])
    }
}

/// The timeline: utterances take their length in pose time.
struct VoiceTimelineTests {
    @Test func aCueIsChosenOnceItsPoseIsCompleteAndUtterancesFollowEachOther() throws {
        var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: try .builtIn(.english)))
        var said: [(String, Double)] = []
        let speak = { (cue: VoiceCue) -> Double in
            said.append((cue.text, 0))
            return 1.0
        }
        var log: [VoiceCuePlanner.Action] = []
        log += timeline.receive(
            .repCompleted(Rep(peak: 90, faults: [], start: 0, end: 2)), session: "l", at: 2, speak: speak)
        // Same pose: a setup change; ranked before the count.
        log += timeline.receive(.setupChanged([.tooFar]), session: "l", at: 2, speak: speak)
        #expect(said.isEmpty)
        log += timeline.tick(2, session: "l", speak: speak)
        #expect(said.map(\.0) == ["Come closer to the camera"])
        #expect(timeline.busyUntil == 3)
        // At 2.5 the voice is busy; at 3.5 the count (1.5 s old) is said.
        log += timeline.tick(2.5, session: "l", speak: speak)
        #expect(said.count == 1)
        log += timeline.tick(3.5, session: "l", speak: speak)
        #expect(said.map(\.0) == ["Come closer to the camera", "1"])
        #expect(timeline.busyUntil == 4)
    }

    @Test func theSameEventsGiveTheSameUtterancesWhateverTheTicks() throws {
        func run(ticks: [Double]) throws -> [String] {
            var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: try .builtIn(.english)))
            var said: [String] = []
            let speak = { (cue: VoiceCue) -> Double in
                said.append(cue.text)
                return Double(cue.text.count) * 0.08
            }
            var events: [(Double, MotionEvent)] = []
            for index in 0..<8 {
                let end = 2 + Double(index) * 1.2
                events.append(
                    (end - 0.6, .formFault(index % 3 == 0 ? .keepTrunkUpright : .keepElbowStraight)))
                events.append(
                    (end, .repRejected(Rep(peak: 80, faults: [.keepTrunkUpright], start: end - 1, end: end))))
            }
            var pending = ticks
            for (t, event) in events {
                while let tick = pending.first, tick < t {
                    _ = timeline.tick(tick, session: "l", speak: speak)
                    pending.removeFirst()
                }
                _ = timeline.receive(event, session: "l", at: t, speak: speak)
            }
            _ = timeline.finish(speak: speak)
            return said
        }
        let without = try run(ticks: [])
        #expect(!without.isEmpty)
        #expect(try run(ticks: stride(from: 0, to: 12, by: 1 / 15).map { $0 }) == without)
    }
}
