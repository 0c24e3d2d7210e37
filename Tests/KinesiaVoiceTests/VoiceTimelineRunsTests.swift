import KinesiaMotion
import Testing

@testable import KinesiaVoice

/// A voice following both sides of one camera through two runs, one after the other: the second
/// run's reps are counted from one again, as the first's were; another patient is greeted, the
/// same one (a worker's new stream) welcomed back.
struct VoiceTimelineRunsTests {
    static func rep(_ end: Double, faults: [FormFeedback] = []) -> Rep {
        Rep(peak: 120, faults: faults, start: end - 1.5, end: end)
    }

    @Test(arguments: [(true, "I can see you"), (false, "I can see you again")])
    func theNextRunIsCountedFromOneAgain(anotherPatient: Bool, greeting: String) throws {
        var timeline = VoiceTimeline(
            planner: VoiceCuePlanner(texts: try .builtIn(.english), following: .sessions(["left", "right"])))
        var spoken: [String] = []
        var dropped: [String] = []
        let speak = { (cue: VoiceCue) -> Double in 1.0 }
        func take(_ actions: [VoiceCuePlanner.Action]) {
            for action in actions {
                switch action {
                case .speak(let cue): spoken.append(cue.text)
                case .drop(let cue, let reason): dropped.append("\(cue.text) (\(reason))")
                }
            }
        }
        let seen = MotionEvent.visibilityChanged(Visibility(isVisible: true, missingJoints: []))
        // The first patient: both sides seen, two clean reps each, snapshots up to 17.5 s.
        take(timeline.receive(seen, session: "left", at: 0.3, speak: speak))
        take(timeline.receive(seen, session: "right", at: 0.3, speak: speak))
        for (session, t) in [("left", 3.7), ("right", 7.3), ("left", 11.0), ("right", 15.0)] {
            take(timeline.tick(t - 0.1, session: "left", speak: speak))
            take(timeline.tick(t - 0.1, session: "right", speak: speak))
            take(timeline.receive(.repCompleted(Self.rep(t)), session: session, at: t, speak: speak))
        }
        take(timeline.tick(17.5, session: "left", speak: speak))
        take(timeline.tick(17.5, session: "right", speak: speak))
        // The next runs: new streams, time from zero again.
        for session in ["right", "left"] {
            if anotherPatient { timeline.patientChanged(session) } else { timeline.sessionRestarted(session) }
        }
        take(timeline.receive(seen, session: "right", at: 0.3, speak: speak))
        take(timeline.receive(seen, session: "left", at: 0.3, speak: speak))
        for (session, t) in [("left", 3.9), ("right", 7.8), ("right", 16.0)] {
            take(timeline.tick(t - 0.1, session: "left", speak: speak))
            take(timeline.tick(t - 0.1, session: "right", speak: speak))
            take(timeline.receive(.repCompleted(Self.rep(t)), session: session, at: t, speak: speak))
        }
        take(timeline.finish(speak: speak))
        #expect(
            spoken == [
                "I can see you", "Left, 1", "Right, 1", "Left, 2", "Right, 2", greeting, "Left, 1",
                "Right, 1", "Right, 2",
            ], "dropped: \(dropped)")
    }
}
