/// The coordinator's answer to a ``ControlRequest``: what happened, in a word and in a
/// sentence, and for `list` the sessions.
public struct ControlAnswer: Hashable, Sendable {
    /// What happened.
    public enum Outcome: String, Hashable, Sendable, CaseIterable {
        /// The session runs on ``ControlAnswer/worker`` (its worker confirmed).
        case started
        /// The session's run ended; its worker confirmed it no longer runs it.
        case stopped
        /// The session's run ended and a new run started; its worker confirmed.
        case reset
        /// The session's run ended and a new run started that begins with a baseline
        /// measurement; its worker confirmed.
        case baselineStarted
        /// The sessions are in ``ControlAnswer/sessions``.
        case listed
        /// A session of that camera and name already runs (a stop first, or a reset).
        case alreadyRunning
        /// No session of that camera and name runs.
        case notRunning
        /// No live worker of the pool has room (or the worker named is not live).
        case noLiveWorker
        /// The coordinator decided, the worker did not confirm in time: the decision stands
        /// and is applied when the worker reports.
        case notConfirmed
        /// The request is not valid.
        case invalid
        /// The key that sent it may not command sessions (it has no `control` role).
        case notAllowed

        /// The exit code of a command that got this answer: 0 done, 64 invalid, 1 otherwise.
        public var exitCode: Int32 {
            switch self {
            case .started, .stopped, .reset, .baselineStarted, .listed: 0
            case .invalid: 64
            case .alreadyRunning, .notRunning, .noLiveWorker, .notConfirmed, .notAllowed: 1
            }
        }
    }

    /// The request's id.
    public var id: String
    /// What happened.
    public var outcome: Outcome
    /// What happened, in a sentence for the person who asked.
    public var message: String
    /// The worker that hosts (or hosted) the session.
    public var worker: String?
    /// The session's run.
    public var run: UInt64?
    /// For `list`: the sessions.
    public var sessions: [SessionStatus]

    /// An answer.
    public init(
        id: String, outcome: Outcome, message: String, worker: String? = nil, run: UInt64? = nil,
        sessions: [SessionStatus] = []
    ) {
        self.id = id
        self.outcome = outcome
        self.message = message
        self.worker = worker
        self.run = run
        self.sessions = sessions
    }
}

/// One session of the site, as `kinesia session list` shows it.
public struct SessionStatus: Hashable, Sendable {
    /// Where a session stands.
    public enum State: String, Hashable, Sendable, CaseIterable {
        /// Its worker reports it running, at its run.
        case running
        /// Given to a worker that has not reported it yet.
        case assigned
        /// No live worker of its pool hosts it: it waits for one.
        case waiting
    }

    /// The plan, with its run.
    public var plan: SessionPlan
    /// The worker it is given to (`nil`: none).
    public var worker: String?
    /// Where it stands.
    public var state: State
    /// Its clean reps in its run, as its worker last reported (`nil`: not known).
    public var repCount: Int?
    /// Its rejected reps in its run, as its worker last reported.
    public var rejectedCount: Int?

    /// A status.
    public init(
        plan: SessionPlan, worker: String?, state: State, repCount: Int? = nil, rejectedCount: Int? = nil
    ) {
        self.plan = plan
        self.worker = worker
        self.state = state
        self.repCount = repCount
        self.rejectedCount = rejectedCount
    }
}
