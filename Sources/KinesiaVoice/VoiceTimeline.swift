public import KinesiaMotion

/// Runs a ``VoiceCuePlanner`` on the events' own time: each utterance occupies its length
/// (the WAV's duration) in pose time, so what is said, and what is dropped as stale or
/// repeated, depends only on the events and the texts, never on how fast they arrive. No I/O:
/// the caller's `speak` closure synthesizes a cue and returns its length in seconds.
///
/// Decisions are taken once an instant is complete: the worker publishes all the events of a
/// pose, then the snapshot of that pose, so a cue is chosen at time `t` when a later event or
/// a snapshot at `t` or later arrives (``tick(_:speak:)``), never between two events of the
/// same pose (a rep and a setup change of one pose are ranked together).
///
/// ```swift
/// var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: try .builtIn(.english)))
/// let speak = { (cue: VoiceCue) -> Double in print(cue.text); return 1.2 }
/// _ = timeline.receive(.formFault(.keepTrunkUpright), session: "left", at: 3.2, speak: speak)
/// _ = timeline.tick(3.2, speak: speak)  // prints "Keep your trunk upright"; busy until 4.4
/// ```
public struct VoiceTimeline: Sendable {
    /// The planner.
    public private(set) var planner: VoiceCuePlanner
    /// The time of the last decision (or event), in seconds.
    public private(set) var now: Double = -.infinity
    /// When the utterance being spoken ends (`nil`: silent).
    public private(set) var busyUntil: Double?

    /// A timeline with nothing said yet.
    public init(planner: VoiceCuePlanner) {
        self.planner = planner
    }

    /// An event at pose time `t`: first what happens before `t`, then the event's cues wait.
    /// - Parameter speak: Speaks a cue (synthesizes it, writes or plays it) and returns its
    ///   length in seconds.
    /// - Returns: What was spoken and dropped, in order.
    /// - Throws: What `speak` throws (the cue counts as spoken).
    public mutating func receive<Failure: Error>(
        _ event: MotionEvent, session: String, at t: Double, speak: (VoiceCue) throws(Failure) -> Double
    ) throws(Failure) -> [VoiceCuePlanner.Action] {
        var actions = try advance(to: t, including: false, speak: speak)
        if t.isFinite { now = max(now, t) }
        actions += planner.enqueue(event, session: session, at: now)
        return actions
    }

    /// Time has reached `t` and every event up to `t` has been received (a snapshot at `t`).
    /// - Throws: What `speak` throws.
    public mutating func tick<Failure: Error>(_ t: Double, speak: (VoiceCue) throws(Failure) -> Double)
        throws(Failure) -> [VoiceCuePlanner.Action]
    {
        try advance(to: t, including: true, speak: speak)
    }

    /// The end of the stream: everything still waiting is decided (spoken or dropped).
    /// - Throws: What `speak` throws.
    public mutating func finish<Failure: Error>(speak: (VoiceCue) throws(Failure) -> Double) throws(Failure)
        -> [VoiceCuePlanner.Action]
    {
        try advance(to: .infinity, including: true, speak: speak)
    }

    /// The session's sender restarted: its counts start again.
    public mutating func sessionRestarted(_ session: String) {
        planner.sessionRestarted(session)
    }

    private mutating func advance<Failure: Error>(
        to limit: Double, including: Bool, speak: (VoiceCue) throws(Failure) -> Double
    ) throws(Failure) -> [VoiceCuePlanner.Action] {
        var actions: [VoiceCuePlanner.Action] = []
        while now.isFinite {
            if let end = busyUntil {
                guard end < limit || (including && end <= limit) else { break }
                planner.finishedSpeaking()
                busyUntil = nil
                now = max(now, end)
            }
            guard now < limit || (including && now <= limit) else { break }
            let decided = planner.nextCue(at: now)
            actions += decided
            guard case .speak(let cue) = decided.last else { break }
            busyUntil = now  // a failed speech takes no time, and the voice is free again
            let duration = try speak(cue)
            busyUntil = now + (duration.isFinite ? max(0, duration) : 0)
        }
        return actions
    }
}
