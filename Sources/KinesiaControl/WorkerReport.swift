/// A pool worker's heartbeat to the coordinator: who it is, its pool and room, and the
/// sessions it runs (each at its run). Sent every second and at once after a change.
public struct WorkerReport: Hashable, Sendable {
    /// A session a worker runs, at a run.
    public struct Running: Hashable, Sendable {
        /// The session.
        public var key: SessionKey
        /// Its run.
        public var run: UInt64
        /// Its clean reps so far (`nil`: not known yet, or an analytics session).
        public var repCount: Int?
        /// Its rejected reps so far.
        public var rejectedCount: Int?
        /// Where its run's events go on and the poses it analysed (`nil`: not known yet, or a
        /// worker without a journal), for a worker on another box that takes it over.
        public var resume: RunResume?

        /// A running session.
        public init(
            key: SessionKey, run: UInt64, repCount: Int? = nil, rejectedCount: Int? = nil,
            resume: RunResume? = nil
        ) {
            self.key = key
            self.run = run
            self.repCount = repCount
            self.rejectedCount = rejectedCount
            self.resume = resume
        }
    }

    /// The worker's process name.
    public var worker: String
    /// Its pool.
    public var pool: String
    /// How many sessions it may host.
    public var capacity: Int
    /// The sessions it runs.
    public var sessions: [Running]
    /// The last assignment epoch it applied (`0`: none).
    public var epoch: UInt64
    /// The report's number, from 1, one more for every report the worker sends (`nil`: a
    /// worker that asks for no lease): the coordinator's ``LeaseGrant`` names it.
    public var number: UInt64?

    /// A report.
    public init(
        worker: String, pool: String, capacity: Int, sessions: [Running], epoch: UInt64 = 0,
        number: UInt64? = nil
    ) {
        self.worker = worker
        self.pool = pool
        self.capacity = capacity
        self.sessions = sessions
        self.epoch = epoch
        self.number = number
    }
}

/// The coordinator's word to a worker: the whole set of sessions it hosts now, at an epoch
/// that only grows. A worker starts what is new (a key, or a key at a new run), stops what is
/// gone, and ignores an assignment older than the last it applied.
public struct WorkerAssignment: Hashable, Sendable {
    /// A run's resume, as a worker reported it.
    public struct GivenResume: Hashable, Sendable {
        /// The run.
        public var run: UInt64
        /// Where it goes on.
        public var resume: RunResume

        /// A run's resume.
        public init(run: UInt64, resume: RunResume) {
            self.run = run
            self.resume = resume
        }
    }

    /// Its place in the coordinator's decisions.
    public var epoch: UInt64
    /// Every session the worker hosts.
    public var sessions: [SessionPlan]
    /// The runs of sessions it hosted that a command ended (`session stop`), by session: the
    /// worker announces their `runEnded`. A session that is simply gone from ``sessions`` was
    /// moved (its worker was taken for dead): its run goes on elsewhere and is not ended here.
    public var stopped: [SessionKey: UInt64]
    /// Where the runs of ``sessions`` go on, as their last worker reported them, by session
    /// and run: a worker that starts one of them rebuilds it from there when its own state
    /// directory knows less (``RunResume``).
    public var resumes: [SessionKey: GivenResume]

    /// An assignment.
    public init(
        epoch: UInt64, sessions: [SessionPlan], stopped: [SessionKey: UInt64] = [:],
        resumes: [SessionKey: GivenResume] = [:]
    ) {
        self.epoch = epoch
        self.sessions = sessions
        self.stopped = stopped
        self.resumes = resumes
    }

    /// The resume given for `plan`'s run, if any.
    public func resume(of plan: SessionPlan) -> RunResume? {
        guard let given = resumes[plan.key], given.run == plan.run else { return nil }
        return given.resume
    }
}
