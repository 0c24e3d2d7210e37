public import KinesiaMotion

/// Runs a ``VoiceCuePlanner`` on the events' own time: each utterance occupies its length
/// (the WAV's duration) in pose time, so what is said, and what is dropped as stale or
/// repeated, depends only on the events and the texts, never on how fast they arrive or in
/// which order the messages of different sessions interleave. No I/O: the caller's `speak`
/// closure synthesizes a cue and returns its length in seconds.
///
/// Decisions are taken once an instant is complete for every session followed: each worker
/// publishes all the events of a pose, then the snapshot of that pose, so a session has
/// completed time `t` when its snapshot at `t` or later (``tick(_:session:speak:)``), or its
/// event after `t`, has arrived. A cue is chosen at `t` only when every session heard from has
/// completed `t`: a rep of the left side and a form fault of the right side at the same pose
/// are ranked together, whichever worker's messages came first. A session more than
/// ``maximumLag`` seconds behind the most advanced one (its worker stopped or restarted) is not
/// waited for; its late events are taken when they come.
///
/// ```swift
/// var timeline = VoiceTimeline(planner: VoiceCuePlanner(texts: try .builtIn(.english)))
/// let speak = { (cue: VoiceCue) -> Double in print(cue.text); return 1.2 }
/// _ = timeline.receive(.formFault(.keepTrunkUpright), session: "left", at: 3.2, speak: speak)
/// _ = timeline.tick(3.2, session: "left", speak: speak)  // "Keep your trunk upright"; busy until 4.4
/// ```
public struct VoiceTimeline: Sendable {
    /// An event received before its instant was complete for every session.
    struct Pending: Sendable {
        var event: MotionEvent
        var session: String
        var t: Double
    }

    /// How far one session's messages have come.
    struct Progress: Sendable, Hashable {
        /// The latest pose time.
        var t: Double
        /// Whether every event at ``t`` has arrived too (its snapshot did), not only the ones before.
        var isComplete: Bool

        /// Whether `other` is further on.
        func isBefore(_ other: Progress) -> Bool {
            t < other.t || (t == other.t && !isComplete && other.isComplete)
        }
    }

    /// The planner.
    public private(set) var planner: VoiceCuePlanner
    /// The time of the last decision (or event), in seconds.
    public private(set) var now: Double = -.infinity
    /// When the utterance being spoken ends (`nil`: silent).
    public private(set) var busyUntil: Double?
    /// How far behind the most advanced session (in seconds of pose time) a session may be
    /// and still be waited for.
    public let maximumLag: Double
    private var pending: [Pending] = []
    private var progress: [String: Progress] = [:]
    /// What each session's pose times are moved by on the timeline: a session whose time base
    /// started over (a new run, a worker restarted) goes on from where the timeline stands.
    private var offsets: [String: Double] = [:]
    /// Sessions restarted whose first message of their new time base has not come yet.
    private var restarted: Set<String> = []

    /// A timeline with nothing said yet.
    /// - Parameter maximumLag: How long (in pose time) a session that fell behind is waited for.
    public init(planner: VoiceCuePlanner, maximumLag: Double = 1) {
        self.planner = planner
        self.maximumLag = max(0, maximumLag)
    }

    /// An event of `session` at pose time `t`: it waits until `t` is complete for every session
    /// followed, then its cues are ranked with the others of that instant.
    /// - Parameter speak: Speaks a cue (synthesizes it, writes or plays it) and returns its
    ///   length in seconds.
    /// - Returns: What was spoken and dropped, in order.
    /// - Throws: What `speak` throws (the cue counts as spoken).
    public mutating func receive<Failure: Error>(
        _ event: MotionEvent, session: String, at t: Double, speak: (VoiceCue) throws(Failure) -> Double
    ) throws(Failure) -> [VoiceCuePlanner.Action] {
        let at = t.isFinite ? onTimeline(t, session: session) : (now.isFinite ? now : 0)
        planner.heard(from: session)
        advanceProgress(of: session, to: Progress(t: at, isComplete: false))
        // In time order; at one instant by session, then in arrival order (a session's own
        // events come in order): the same events give the same queue whatever the interleaving.
        let index =
            pending.firstIndex { $0.t > at || ($0.t == at && $0.session > session) } ?? pending.endIndex
        pending.insert(Pending(event: event, session: session, t: at), at: index)
        return try advance(to: horizon, speak: speak)
    }

    /// `session` has reached `t`: every one of its events up to `t` has been received (its
    /// snapshot at `t`).
    /// - Throws: What `speak` throws.
    public mutating func tick<Failure: Error>(
        _ t: Double, session: String, speak: (VoiceCue) throws(Failure) -> Double
    ) throws(Failure) -> [VoiceCuePlanner.Action] {
        planner.heard(from: session)
        if t.isFinite {
            advanceProgress(of: session, to: Progress(t: onTimeline(t, session: session), isComplete: true))
        }
        return try advance(to: horizon, speak: speak)
    }

    /// The end of the stream: everything still waiting is decided (spoken or dropped).
    /// - Throws: What `speak` throws.
    public mutating func finish<Failure: Error>(speak: (VoiceCue) throws(Failure) -> Double) throws(Failure)
        -> [VoiceCuePlanner.Action]
    {
        try advance(to: Progress(t: .infinity, isComplete: true), speak: speak)
    }

    /// The session's sender restarted (a new run, or a worker without its state): its counts
    /// start again, and so does its time: its next message is taken at the timeline's now, and
    /// the ones after it keep their distance from it (a new patient's reps are counted one by
    /// one, not all at once as stale or repeated).
    public mutating func sessionRestarted(_ session: String) {
        planner.sessionRestarted(session)
        progress[session] = nil
        restarted.insert(session)
    }

    /// Another patient begins on `session` (a run of another patient): as
    /// ``sessionRestarted(_:)``, and the new patient is greeted, not welcomed back.
    public mutating func patientChanged(_ session: String) {
        sessionRestarted(session)
        planner.patientChanged(session)
    }

    /// Pose time `t` of `session` on the timeline.
    private mutating func onTimeline(_ t: Double, session: String) -> Double {
        if restarted.remove(session) != nil {
            let start = max(now, progress.values.map(\.t).max() ?? -.infinity)
            offsets[session] = start.isFinite ? start - t : 0
        }
        return t + offsets[session, default: 0]
    }

    private mutating func advanceProgress(of session: String, to new: Progress) {
        if let old = progress[session], !old.isBefore(new) { return }
        progress[session] = new
    }

    /// The latest instant complete for every session that is not more than ``maximumLag``
    /// behind the most advanced one.
    var horizon: Progress {
        guard let newest = progress.values.map(\.t).max() else {
            return Progress(t: -.infinity, isComplete: false)
        }
        var horizon = Progress(t: .infinity, isComplete: true)
        for session in progress.values where session.t >= newest - maximumLag && session.isBefore(horizon) {
            horizon = session
        }
        return horizon
    }

    private mutating func advance<Failure: Error>(
        to limit: Progress, speak: (VoiceCue) throws(Failure) -> Double
    ) throws(Failure) -> [VoiceCuePlanner.Action] {
        func isDecidable(_ t: Double) -> Bool { t < limit.t || (limit.isComplete && t == limit.t) }
        var actions: [VoiceCuePlanner.Action] = []
        while true {
            // The next instant something happens: the utterance ends, an event's time comes, or
            // (the voice free) now, for the cues that wait.
            var next = Double.infinity
            if let end = busyUntil {
                next = end
            } else if !planner.waiting.isEmpty {
                next = now
            }
            if let first = pending.first { next = min(next, max(first.t, now)) }
            guard next.isFinite, isDecidable(next) else { break }
            now = max(now, next)
            while let first = pending.first, first.t <= now {
                pending.removeFirst()
                actions += planner.enqueue(first.event, session: first.session, at: now)
            }
            if let end = busyUntil, end <= now {
                planner.finishedSpeaking()
                busyUntil = nil
            }
            guard busyUntil == nil else { continue }
            let decided = planner.nextCue(at: now)
            actions += decided
            guard case .speak(let cue) = decided.last else { continue }
            busyUntil = now  // a failed speech takes no time, and the voice is free again
            let duration = try speak(cue)
            busyUntil = now + (duration.isFinite ? max(0, duration) : 0)
        }
        return actions
    }
}
