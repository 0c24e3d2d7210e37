public import KinesiaMotion

/// Decides what to say and when: turns the events of the sessions a voice follows into cues in
/// one language, and picks the next cue to speak. A value-type state machine with no I/O; time
/// is a value passed in (the events' pose timestamps), so the same events always give the same
/// utterances.
///
/// The rules:
/// - **One utterance at a time.** ``nextCue(at:)`` returns a cue only when nothing is being
///   spoken; ``finishedSpeaking()`` frees the voice.
/// - **Ranked.** Waiting cues are spoken setup first, then form, then progress
///   (``VoiceCuePriority``), the oldest first within a rank, whichever session they came from:
///   a form cue of one side is never dropped or put off for a count of the other.
/// - **Fresh.** A cue older than its rank's ``Rules/maximumAge`` when it could be spoken is
///   dropped (`"3"` said while rep 5 finishes helps nobody).
/// - **Not repeated.** A text spoken less than ``Rules/repeatWindow`` seconds ago is dropped
///   (a count only when its own session said it: each side counts its own reps).
/// - **Replaced.** A newer cue of the same kind and session replaces a waiting one
///   (`"I can see you again"` replaces `"I can't see your knee"`; `"4"` replaces `"3"`), so a
///   count is never said after the next count of its side.
/// - **Sides named where they matter.** When the voice follows more than one session
///   (``namesSides``), the cues of one side (counts, rejected reps, holds, the baseline, and the
///   corrections of one limb: ``FormFeedback/concernsOneSide``) are said with their side, from
///   ``VoiceTexts/sidedCues`` (`"Left, 2"`); what concerns the whole patient (visibility,
///   placement, the trunk) names none. A voice that follows one session never names a side.
/// - **Greeted once.** A session's first sighting is a greeting (`"I can see you"`); its
///   return after the joints left the view is `"I can see you again"`; another patient's run
///   (``patientChanged(_:)``) is greeted anew.
///
/// ```swift
/// var planner = VoiceCuePlanner(texts: try .builtIn(.english), following: .sessions(["left", "right"]))
/// _ = planner.enqueue(.repCompleted(Rep(peak: 120, faults: [], start: 1, end: 3.2)), session: "left", at: 3.2)
/// for action in planner.nextCue(at: 3.2) {
///     if case .speak(let cue) = action { print(cue.text) }  // "Left, 1"
/// }
/// ```
public struct VoiceCuePlanner: Sendable {
    /// The timing rules.
    public struct Rules: Sendable, Hashable {
        /// The oldest a cue of each rank may be when it starts, in seconds.
        public var maximumAge: [VoiceCuePriority: Double]
        /// A text is not spoken again within this many seconds.
        public var repeatWindow: Double
        /// The most cues that wait; beyond, the lowest-ranked, oldest one is dropped.
        public var queueLimit: Int

        /// Setup cues live 4 s, form cues 3 s, progress cues 2 s; no repeat within 5 s; 8 waiting.
        public init(
            maximumAge: [VoiceCuePriority: Double] = [.setup: 4, .form: 3, .progress: 2],
            repeatWindow: Double = 5, queueLimit: Int = 8
        ) {
            self.maximumAge = maximumAge
            self.repeatWindow = repeatWindow
            self.queueLimit = max(1, queueLimit)
        }
    }

    /// What the planner asks for.
    public enum Action: Hashable, Sendable {
        /// Speak this cue now (nothing else is being spoken).
        case speak(VoiceCue)
        /// This cue will not be spoken, and why.
        case drop(VoiceCue, DropReason)
    }

    /// Why a cue was not spoken.
    public enum DropReason: Hashable, Sendable, CustomStringConvertible {
        /// It had waited `age` seconds, more than its rank allows.
        case stale(age: Double)
        /// The same text was spoken `ago` seconds before.
        case repeated(ago: Double)
        /// A newer cue of the same kind and session replaced it while it waited.
        case superseded
        /// Too many cues were waiting.
        case queueFull

        /// `"stale (2.4 s old)"`...
        public var description: String {
            switch self {
            case .stale(let age): "stale (\(Self.seconds(age)) s old)"
            case .repeated(let ago): "repeated (said \(Self.seconds(ago)) s ago)"
            case .superseded: "superseded by a newer cue"
            case .queueFull: "too many cues waiting"
            }
        }

        private static func seconds(_ value: Double) -> String {
            let tenths = Int((value * 10).rounded())
            return "\(tenths / 10).\(tenths % 10)"
        }
    }

    /// Which sessions a voice follows: decides whether its cues name their side.
    public enum Following: Hashable, Sendable {
        /// The sessions the user named (`kinesia voice --session`, repeated): sides are named
        /// when there are two or more.
        case sessions(Set<String>)
        /// Every session of a camera: sides are named once two or more have been heard from
        /// (an event or a snapshot, ``heard(from:)``).
        case camera
    }

    /// What the planner knows of one session.
    struct SessionState: Sendable {
        var cleanCount = 0
        var holding = false
        /// Whether a visibility change was received: the next sighting is a return.
        var seen = false
    }

    /// The texts.
    public let texts: VoiceTexts
    /// The rules.
    public let rules: Rules
    /// The sessions followed.
    public let following: Following
    /// The sessions heard from.
    public private(set) var heardSessions: Set<String> = []
    /// The cues waiting, in arrival order.
    public private(set) var waiting: [VoiceCue] = []
    /// The cue being spoken.
    public private(set) var speaking: VoiceCue?
    private var lastSpoken: [String: Double] = [:]
    private var sessions: [String: SessionState] = [:]

    /// A planner with nothing to say.
    /// - Parameter following: The sessions the voice follows (every session of the camera by
    ///   default).
    public init(texts: VoiceTexts, rules: Rules = Rules(), following: Following = .camera) {
        self.texts = texts
        self.rules = rules
        self.following = following
    }

    /// Whether a cue is being spoken.
    public var isSpeaking: Bool { speaking != nil }

    /// Whether the cues of one side name it: the voice follows more than one session.
    public var namesSides: Bool {
        switch following {
        case .sessions(let sessions): sessions.count > 1
        case .camera: heardSessions.count > 1
        }
    }

    /// A message (an event or a snapshot) came from `session`: with ``Following/camera``, a
    /// second session makes the cues name their side.
    public mutating func heard(from session: String) {
        heardSessions.insert(session)
    }

    /// The spoken name of a session's side: ``VoiceTexts/sides`` for `left` and `right`, the
    /// session's own name otherwise.
    public func sideName(of session: String) -> String {
        BodySide(rawValue: session).flatMap { texts.sides[$0] } ?? session
    }

    /// Turns an event into cues and queues them; never speaks (call ``nextCue(at:)``).
    /// - Returns: The waiting cues it replaced or pushed out.
    public mutating func enqueue(_ event: MotionEvent, session: String, at now: Double) -> [Action] {
        heard(from: session)
        var actions: [Action] = []
        for cue in cues(for: event, session: session, at: now) {
            if let group = cue.subject.supersedingGroup {
                waiting.removeAll { old in
                    guard old.session == cue.session, old.subject.supersedingGroup == group else {
                        return false
                    }
                    actions.append(.drop(old, .superseded))
                    return true
                }
            }
            waiting.append(cue)
            if waiting.count > rules.queueLimit, let victim = lowestRanked() {
                actions.append(.drop(waiting.remove(at: victim), .queueFull))
            }
        }
        return actions
    }

    /// What "the same cue" means for the repeat rule: the same text, but a count only for its own
    /// session. One patient hears a form correction once whichever side it came from, yet the
    /// right side's "1" is never taken for a repeat of the left side's.
    static func repeatKey(_ cue: VoiceCue) -> String {
        if case .repCounted = cue.subject { return cue.session + "\u{0}" + cue.text }
        return cue.text
    }

    /// When nothing is being spoken: the next cue to speak, after the ones dropped on the way
    /// (stale, repeated). Empty when a cue is being spoken or none waits.
    public mutating func nextCue(at now: Double) -> [Action] {
        guard speaking == nil else { return [] }
        var actions: [Action] = []
        while let index = highestRanked() {
            let cue = waiting.remove(at: index)
            let age = now - cue.receivedAt
            if age > rules.maximumAge[cue.priority, default: 2] {
                actions.append(.drop(cue, .stale(age: age)))
                continue
            }
            let key = Self.repeatKey(cue)
            if let said = lastSpoken[key], now - said < rules.repeatWindow {
                actions.append(.drop(cue, .repeated(ago: now - said)))
                continue
            }
            lastSpoken[key] = now
            speaking = cue
            actions.append(.speak(cue))
            break
        }
        return actions
    }

    /// The cue being spoken has finished: the voice is free.
    public mutating func finishedSpeaking() {
        speaking = nil
    }

    /// The session's sender started over (a worker restarted): its counts start again. The
    /// patient was seen all the same: their next sighting is a return, not a greeting.
    public mutating func sessionRestarted(_ session: String) {
        let seen = sessions[session]?.seen ?? false
        sessions[session] = SessionState(seen: seen)
    }

    /// Another patient begins on the session (a run of another patient): everything starts
    /// again, the greeting too (`"I can see you"`, not `"I can see you again"`).
    public mutating func patientChanged(_ session: String) {
        sessions[session] = SessionState()
    }

    /// The cues of one event (and what the planner learns from it: counts, holds, sightings).
    mutating func cues(for event: MotionEvent, session: String, at now: Double) -> [VoiceCue] {
        var state = sessions[session, default: SessionState()]
        defer { sessions[session] = state }
        let side = namesSides ? sideName(of: session) : nil
        func cue(_ subject: VoiceCueSubject, _ text: String) -> VoiceCue {
            VoiceCue(subject: subject, text: text, session: session, receivedAt: now)
        }
        func entry(_ entry: VoiceTexts.Entry, _ values: [String: String] = [:]) -> String {
            VoiceTemplate.fill(texts.cues[entry] ?? "", values)
        }
        /// The cue of one side: its sided text when sides are named.
        func sided(
            _ plain: VoiceTexts.Entry, _ sidedEntry: VoiceTexts.SidedEntry, _ values: [String: String] = [:]
        ) -> String {
            guard let side, let template = texts.sidedCues[sidedEntry] else { return entry(plain, values) }
            return VoiceTemplate.fill(template, values.merging(["side": side]) { own, _ in own })
        }
        switch event {
        case .repCompleted(let rep):
            state.cleanCount += 1
            let values = [
                "count": "\(state.cleanCount)", "peak": Self.whole(rep.peak),
                "seconds": Self.whole(rep.duration),
            ]
            defer { state.holding = false }
            return state.holding
                ? [cue(.holdCompleted, sided(.holdCompleted, .holdCompleted, values))]
                : [cue(.repCounted, sided(.repCounted, .repCounted, values))]
        case .repRejected(let rep):
            let fault = rep.faults.first.flatMap { texts.formFeedback[$0] } ?? entry(.unknownFault)
            let values = ["fault": fault, "peak": Self.whole(rep.peak), "seconds": Self.whole(rep.duration)]
            defer { state.holding = false }
            return state.holding
                ? [cue(.holdRejected, sided(.holdRejected, .holdRejected, values))]
                : [cue(.repRejected, sided(.repRejected, .repRejected, values))]
        case .holdStarted:
            state.holding = true
            return [cue(.holdStarted, sided(.holdStarted, .holdStarted))]
        case .formFault(let fault):
            let text = texts.formFeedback[fault] ?? ""
            guard let side, fault.concernsOneSide, let template = texts.sidedCues[.formFault] else {
                return [cue(.formFault(fault), text)]
            }
            return [cue(.formFault(fault), VoiceTemplate.fill(template, ["fault": text, "side": side]))]
        case .visibilityChanged(let visibility):
            defer { state.seen = true }
            if visibility.isVisible {
                return state.seen
                    ? [cue(.visibilityRegained, entry(.visibilityRegained))]
                    : [cue(.visibilityGained, entry(.visibilityGained))]
            }
            let names = visibility.missingJoints.map { texts.joints[$0] ?? $0.rawValue }
            return [cue(.visibilityLost, entry(.visibilityLost, ["joints": texts.list(names)]))]
        case .setupChanged(let issues):
            // The most important problem: the first in SetupIssue's order.
            guard let issue = SetupIssue.allCases.first(where: issues.contains) else {
                return [cue(.setupFixed, entry(.setupFixed))]
            }
            return [cue(.setupIssue(issue), texts.setupIssues[issue] ?? "")]
        case .baselineCompleted(let value):
            return [
                cue(
                    .baselineCompleted,
                    sided(.baselineCompleted, .baselineCompleted, ["degrees": Self.whole(value)]))
            ]
        }
    }

    /// A value rounded to a whole number, as spoken: `"87"`.
    static func whole(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        return "\(Int(value.rounded()))"
    }

    /// The index of the next cue to speak: the highest rank, then the oldest.
    private func highestRanked() -> Int? {
        waiting.indices.min { (waiting[$0].priority, $0) < (waiting[$1].priority, $1) }
    }

    /// The index of the cue to push out: the lowest rank, then the oldest.
    private func lowestRanked() -> Int? {
        waiting.indices.max { (waiting[$0].priority, -$0) < (waiting[$1].priority, -$1) }
    }
}
