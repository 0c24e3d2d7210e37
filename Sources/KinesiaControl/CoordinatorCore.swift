import KinesiaMotion

/// Every decision of the coordinator (`kinesia coordinator`), with no socket, no clock and no
/// I/O: time is passed in (`now`, the time since the coordinator started).
///
/// It keeps the **desired state**, the ``SessionPlan``s of the site (durable: every change is
/// a ``Action/savePlan(_:)`` or ``Action/removePlan(_:)`` the shell writes before it sends
/// what follows), and the **live state**, learned from the pool workers' heartbeats
/// (``WorkerReport``): which workers are alive, their pool and room, which sessions they run.
///
/// Decisions:
/// - **Commands** (``ControlRequest``) answer with what happened. A request id already
///   answered is answered again with the same answer and changes nothing; one still waiting is
///   answered to every peer that sent it. A start, stop, reset or baseline is answered when the worker
///   confirms it (its next heartbeat shows the session at its new run, or gone), or after
///   ``Configuration/confirmWait`` with ``ControlAnswer/Outcome/notConfirmed``: the decision
///   stands either way.
/// - **Placement**: a session goes to the worker it names, or to a live worker of its pool with
///   room, preferring one that already hosts a session of the same camera (its poses are
///   already there), then the one with the most room, then by name. No worker: the start is
///   refused (``ControlAnswer/Outcome/noLiveWorker``) and nothing is kept.
/// - **Assignments**: a worker is told the whole set of sessions it hosts
///   (``WorkerAssignment``, at an epoch that only grows) whenever the set changes, and again,
///   at most once per ``Configuration/resendInterval``, while its heartbeat shows otherwise.
/// - **Workers that go silent**: a worker not heard from for ``Configuration/lease`` is gone;
///   its sessions wait for, and go to, another live worker of their pool.
/// - **Rebalancing**: when a live worker of a pool runs at least two sessions more than another
///   with room (a worker joined, or one came back), one session moves, and only then the next:
///   the busier worker is told to give it up (its run goes on: it is not ended), and once its
///   heartbeat no longer shows it, the other worker is given it and resumes it from its
///   checkpoint. A camera's sessions stay together: the session moved is one of a camera the
///   other worker already hosts, else one of the busier worker's smallest camera whose every
///   session fits in half the difference (a camera moves whole, one session at a time, or not
///   at all). A session that names its worker never moves; a command for a session on its way
///   cancels the move.
/// - **A restarted coordinator** learns where the sessions run from the heartbeats: a
///   session a worker reports at its planned run stays there. The sessions no worker reports
///   are placed only after ``Configuration/startGrace``, so that nothing is started twice.
///
/// ```swift
/// var core = CoordinatorCore(plans: stored, nextRun: 1, epoch: 0, now: .zero)
/// var actions: [CoordinatorCore.Action] = []
/// core.receive(request, from: peer, now: clock.now, into: &actions)
/// ```
public struct CoordinatorCore: Sendable {
    /// The coordinator's times and bounds.
    public struct Configuration: Hashable, Sendable {
        /// How long a worker may be silent before its sessions go elsewhere: three heartbeats
        /// of one second.
        public var lease: Duration
        /// How long a command waits for its worker's confirmation before it is answered
        /// ``ControlAnswer/Outcome/notConfirmed``.
        public var confirmWait: Duration
        /// How long a (re)started coordinator waits for the workers' heartbeats before it
        /// places the sessions none of them reports.
        public var startGrace: Duration
        /// How often an assignment is sent again to a worker that does not show it.
        public var resendInterval: Duration
        /// How many answers are kept for requests sent again.
        public var rememberedAnswers: Int

        /// The defaults: a lease of 3 s, 2 s to confirm, 3 s of grace, resent every second,
        /// 1,024 answers kept.
        public init(
            lease: Duration = .seconds(3), confirmWait: Duration = .seconds(2),
            startGrace: Duration = .seconds(3),
            resendInterval: Duration = .seconds(1), rememberedAnswers: Int = 1024
        ) {
            self.lease = lease
            self.confirmWait = confirmWait
            self.startGrace = startGrace
            self.resendInterval = resendInterval
            self.rememberedAnswers = rememberedAnswers
        }
    }

    /// Who sent a message: the control socket's routing id of the peer.
    public typealias Peer = [UInt8]

    /// What the shell must do, in order.
    public enum Action: Hashable, Sendable {
        /// Send `answer` to `peer`.
        case answer(ControlAnswer, to: Peer)
        /// Send `assignment` to `worker` at `peer`.
        case assign(WorkerAssignment, worker: String, to: Peer)
        /// Answer a worker's numbered heartbeat with its lease, before any assignment that
        /// follows it.
        case grantLease(LeaseGrant, to: Peer)
        /// Keep the plan (a new one, or a new run) durably, before what follows.
        case savePlan(SessionPlan)
        /// Forget the plan durably, before what follows.
        case removePlan(SessionKey)
        /// Keep the next run number and the last epoch durably, before what follows.
        case saveCounters(nextRun: UInt64, epoch: UInt64)
        /// Keep a run's latest resume durably (`nil`: forget it), before what follows: the grant
        /// that follows tells the worker the coordinator has it, and a restarted coordinator
        /// gives it to the worker that takes the session over.
        case saveResume(SessionKey, WorkerAssignment.GivenResume?)
        /// Keep the request id of a command that changed the desired state, with the answer it
        /// gets once done, durably and with the change (one transaction): a coordinator
        /// restarted before or after answering does it only once when it is sent again.
        case rememberRequest(ControlAnswer)
        /// Tell the operator (a log line).
        case notice(String)
        /// Count a part of a message refused under `counter` on `health/coordinator/`, and say
        /// why (a warning).
        case refuse(counter: String, reason: String)
        /// Announce the end of a run no live worker hosts (a stop or a reset while its worker
        /// is gone), on its session's topic, so that no run stays open for ever: its counts as
        /// last reported, no reps (the coordinator does not read the run's journal).
        case announceRunEnd(RunRecord.RunEnd)
    }

    private struct Worker: Sendable {
        var peer: Peer
        var pool: String
        var capacity: Int
        var lastSeen: Duration
        var running: [SessionKey: UInt64]
        /// The sessions' reported counts (clean, rejected).
        var counts: [SessionKey: (Int, Int)] = [:]
        var lastSent: [SessionPlan]?
        var lastSentAt: Duration
    }

    private enum Expectation: Hashable, Sendable {
        case running(SessionKey, run: UInt64)
        case gone(SessionKey, run: UInt64)
    }

    private struct Pending: Sendable {
        var id: String
        var peers: [Peer]
        var expectation: Expectation
        var worker: String
        var deadline: Duration
        var done: ControlAnswer
    }

    /// Its times and bounds.
    public let configuration: Configuration
    /// The desired state: every session of the site, with its run.
    public private(set) var plans: [SessionKey: SessionPlan]
    private var placement: [SessionKey: String] = [:]
    /// The runs a stop ended, by the worker that hosted them, told in its assignments until its
    /// report no longer shows them (so that it ends them, and a worker a session was moved away
    /// from does not).
    private var stoppedRuns: [String: [SessionKey: UInt64]] = [:]
    /// Each session's counts as last reported, with the run they are of.
    private var lastCounts: [SessionKey: (run: UInt64, clean: Int, rejected: Int)] = [:]
    /// Where each run goes on, as the worker it is placed on last reported it: given with the
    /// session to the next worker (another box rebuilds it from there). Kept durably
    /// (``Action/saveResume(_:_:)``), so a restarted coordinator still has it.
    private var resumes: [SessionKey: WorkerAssignment.GivenResume]
    private var workers: [String: Worker] = [:]
    private var pending: [Pending] = []
    private var answers: [String: ControlAnswer] = [:]
    private var answerOrder: [String] = []
    private var nextRun: UInt64
    private var epoch: UInt64
    private let graceEnds: Duration
    /// The cameras an ingest was heard publishing (its heartbeat announces `pose/<camera>/`),
    /// and when last.
    private var publishing: [String: Duration] = [:]
    /// How long a camera counts as publishing after its ingest's last heartbeat.
    public static let publishingFor: Duration = .seconds(5)

    /// Whether the grace after the start is over (the sessions waiting are then placed when a
    /// worker reports or one goes, never by the clock).
    private var graceIsOver = false

    /// A session on its way from one live worker of its pool to another.
    private struct Move: Sendable {
        var key: SessionKey
        var run: UInt64
        var from: String
        var to: String
        /// When it began.
        var since: Duration
        /// Whether `to` was given it (`from` no longer showed it).
        var handedOver = false
    }

    /// How long a move may take before it is given up (`from` never gave the session up, or
    /// `to` never ran it): five leases.
    private var moveTimeout: Duration { configuration.lease * 5 }

    /// The session moving, if one is (one at a time, site-wide).
    private var move: Move?
    /// Sessions moved to rebalance a pool, since the start.
    public private(set) var moves = 0

    /// A coordinator that starts at `now` with the plans, run number and epoch it kept, and
    /// the answers of the commands it did (``Action/rememberRequest(_:)``, oldest first).
    public init(
        plans: [SessionPlan], nextRun: UInt64, epoch: UInt64, now: Duration,
        configuration: Configuration = Configuration(), answers: [ControlAnswer] = [],
        resumes: [SessionKey: WorkerAssignment.GivenResume] = [:]
    ) {
        self.configuration = configuration
        self.resumes = resumes.filter { key, given in plans.contains { $0.key == key && $0.run == given.run }
        }
        self.plans = Dictionary(plans.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        self.nextRun = max(nextRun, (plans.map(\.run).max() ?? 0) + 1)
        self.epoch = epoch
        graceEnds = now + configuration.startGrace
        for answer in answers.suffix(configuration.rememberedAnswers) where self.answers[answer.id] == nil {
            answerOrder.append(answer.id)
            self.answers[answer.id] = answer
        }
    }

    // MARK: - Commands

    /// Takes a command from `peer`.
    public mutating func receive(
        _ request: ControlRequest, from peer: Peer, now: Duration, into actions: inout [Action]
    ) {
        if let answer = answers[request.id] {
            actions.append(.answer(answer, to: peer))
            return
        }
        if let index = pending.firstIndex(where: { $0.id == request.id }) {
            pending[index].peers.append(peer)
            return
        }
        switch request.command {
        case .start(let plan): start(plan, request: request, peer: peer, now: now, into: &actions)
        case .stop(let key): stop(key, request: request, peer: peer, now: now, into: &actions)
        case .reset(let key):
            newRun(key, baseline: nil, request: request, peer: peer, now: now, into: &actions)
        case .baseline(let key, let reps):
            newRun(key, baseline: .some(reps), request: request, peer: peer, now: now, into: &actions)
        case .list:
            answer(
                ControlAnswer(
                    id: request.id, outcome: .listed, message: "\(plans.count) session(s)", sessions: statuses
                ),
                to: [peer], into: &actions)
        }
    }

    private mutating func start(
        _ requested: SessionPlan, request: ControlRequest, peer: Peer, now: Duration,
        into actions: inout [Action]
    ) {
        let key = requested.key
        if let existing = plans[key] {
            answer(
                ControlAnswer(
                    id: request.id, outcome: .alreadyRunning,
                    message: "\(key) already runs (run \(existing.run)"
                        + (placement[key].map { " on worker \($0)" } ?? ", waiting for a worker")
                        + "): stop it first, or reset it",
                    worker: placement[key], run: existing.run),
                to: [peer], into: &actions)
            return
        }
        guard let worker = place(requested, now: now) else {
            answer(
                ControlAnswer(
                    id: request.id, outcome: .noLiveWorker, message: noWorkerMessage(requested)),
                to: [peer], into: &actions)
            return
        }
        var plan = requested
        plan.run = takeRun()
        // Started all the same (a camera may come after its sessions), and said: the run then
        // begins at the camera's first pose, whichever worker hosts it when that pose comes.
        plan.beginsAtStreamStart = publishing[key.camera].map { now - $0 > Self.publishingFor } ?? true
        plans[key] = plan
        placement[key] = worker
        actions.append(.savePlan(plan))
        actions.append(.saveCounters(nextRun: nextRun, epoch: epoch))
        send(to: worker, now: now, into: &actions)
        let quiet =
            plan.beginsAtStreamStart
            ? "; no ingest is heard publishing \(key.camera): the run begins at its first pose" : ""
        expect(
            .running(key, run: plan.run), worker: worker, request: request, peer: peer, now: now,
            done: ControlAnswer(
                id: request.id, outcome: .started,
                message: "\(key) started on worker \(worker) (run \(plan.run))" + quiet,
                worker: worker, run: plan.run),
            into: &actions)
    }

    private mutating func stop(
        _ key: SessionKey, request: ControlRequest, peer: Peer, now: Duration, into actions: inout [Action]
    ) {
        cancelMove(of: key, now: now, into: &actions)
        guard let plan = plans.removeValue(forKey: key) else {
            answer(notRunning(key, request), to: [peer], into: &actions)
            return
        }
        actions.append(.removePlan(key))
        resumes[key] = nil
        let done = ControlAnswer(
            id: request.id, outcome: .stopped,
            message: "\(key) stopped (run \(plan.run)" + (placement[key].map { " on worker \($0))" } ?? ")"),
            worker: placement[key], run: plan.run)
        let worker = placement.removeValue(forKey: key)
        if let worker { stoppedRuns[worker, default: [:]][key] = plan.run }
        endIfUnhosted(plan, reason: .stopped, worker: worker, into: &actions)
        tell(
            worker.flatMap { workers[$0] == nil ? nil : $0 }, expecting: .gone(key, run: plan.run),
            done: done,
            request: request, peer: peer, now: now, into: &actions)
    }

    /// A reset (`baseline` `nil`), or a baseline (`.some(reps)`, `nil` reps: the exercise's):
    /// the run ends, a new one starts with the same plan, beginning with a baseline or not.
    private mutating func newRun(
        _ key: SessionKey, baseline: Int??, request: ControlRequest, peer: Peer, now: Duration,
        into actions: inout [Action]
    ) {
        cancelMove(of: key, now: now, into: &actions)
        guard var plan = plans[key] else {
            answer(notRunning(key, request), to: [peer], into: &actions)
            return
        }
        let ended = plan.run
        endIfUnhosted(plan, reason: .reset, worker: placement[key], into: &actions)
        plan.run = takeRun()
        // A new run begins at the first pose its worker receives (its camera's stream, heard or
        // not, may hold poses of the run that ended).
        plan.beginsAtStreamStart = false
        // Told in the plan, the record and the answer: the exercise's number when none is given.
        plan.baselineReps = baseline.map { $0 ?? plan.exercise.sessionRules.baselineReps }
        plans[key] = plan
        actions.append(.savePlan(plan))
        actions.append(.saveCounters(nextRun: nextRun, epoch: epoch))
        let what =
            plan.baselineReps.map { "baseline of \($0) rep\($0 == 1 ? "" : "s") started: " } ?? "reset: "
        let done = ControlAnswer(
            id: request.id, outcome: plan.baselineReps == nil ? .reset : .baselineStarted,
            message: "\(key) \(what)run \(ended) ended, run \(plan.run) started"
                + (placement[key].map { " on worker \($0)" } ?? ""),
            worker: placement[key], run: plan.run)
        tell(
            placement[key], expecting: .running(key, run: plan.run), done: done, request: request, peer: peer,
            now: now, into: &actions)
    }

    /// Announces the end of `plan`'s run when no live worker hosts it (`worker` is none or gone):
    /// a worker that hosts it announces the end itself.
    private mutating func endIfUnhosted(
        _ plan: SessionPlan, reason: RunRecord.RunEnd.Reason, worker: String?, into actions: inout [Action]
    ) {
        guard worker.flatMap({ workers[$0] }) == nil else { return }
        let counts = lastCounts[plan.key].flatMap { $0.run == plan.run ? $0 : nil }
        actions.append(
            .announceRunEnd(
                RunRecord.RunEnd(
                    run: plan.run, key: plan.key, reason: reason, repCount: counts?.clean ?? 0,
                    rejectedCount: counts?.rejected ?? 0, best: 0)))
        actions.append(
            .notice("\(plan.key): run \(plan.run) ended (\(reason.rawValue)) with no live worker hosting it"))
    }

    /// Sends `worker` its sessions and waits for it to show `expectation` before answering
    /// `done`; with no worker to tell, answers at once.
    private mutating func tell(
        _ worker: String?, expecting expectation: Expectation, done: ControlAnswer, request: ControlRequest,
        peer: Peer, now: Duration, into actions: inout [Action]
    ) {
        guard let worker else {
            actions.append(.rememberRequest(done))
            answer(done, to: [peer], into: &actions)
            return
        }
        send(to: worker, now: now, into: &actions)
        expect(
            expectation, worker: worker, request: request, peer: peer, now: now, done: done, into: &actions)
    }

    private func notRunning(_ key: SessionKey, _ request: ControlRequest) -> ControlAnswer {
        ControlAnswer(id: request.id, outcome: .notRunning, message: "\(key) does not run")
    }

    private func noWorkerMessage(_ plan: SessionPlan) -> String {
        if let named = plan.worker {
            guard let worker = workers[named] else { return "worker \(named) is not live" }
            guard worker.pool == plan.pool else {
                return "worker \(named) is in pool \(worker.pool), not \(plan.pool)"
            }
            return "worker \(named) has no room (\(worker.capacity) sessions)"
        }
        return workers.values.contains { $0.pool == plan.pool }
            ? "no live worker in pool \(plan.pool) has room"
            : "no live worker in pool \(plan.pool)"
    }

    private mutating func takeRun() -> UInt64 {
        defer { nextRun += 1 }
        return nextRun
    }

    private mutating func expect(
        _ expectation: Expectation, worker: String, request: ControlRequest, peer: Peer, now: Duration,
        done: ControlAnswer, into actions: inout [Action]
    ) {
        actions.append(.rememberRequest(done))
        pending.append(
            Pending(
                id: request.id, peers: [peer], expectation: expectation, worker: worker,
                deadline: now + configuration.confirmWait, done: done))
        settle(into: &actions)
    }

    /// An ingest's heartbeat says it publishes `camera`'s poses (at `now`).
    public mutating func cameraPublishes(_ camera: String, now: Duration) {
        publishing[camera] = now
    }

    // MARK: - Workers

    /// Takes a pool worker's heartbeat from `peer`.
    public mutating func receive(
        _ report: WorkerReport, from peer: Peer, now: Duration, into actions: inout [Action]
    ) {
        let running = Dictionary(
            report.sessions.map { ($0.key, $0.run) }, uniquingKeysWith: { _, last in last })
        let isNew = workers[report.worker] == nil
        // Its lease first: an assignment that follows is read by a worker that holds one.
        if let number = report.number {
            actions.append(.grantLease(LeaseGrant(report: number, lease: configuration.lease), to: peer))
        }
        var worker =
            workers[report.worker]
            ?? Worker(
                peer: peer, pool: report.pool, capacity: report.capacity, lastSeen: now, running: [:],
                lastSent: nil, lastSentAt: now)
        if worker.peer != peer {
            // The worker restarted (a new connection): what it was sent is gone with it.
            worker.peer = peer
            worker.lastSent = nil
        }
        // A worker that applied a higher epoch (a coordinator whose counters were lost) is never
        // sent one it would ignore as stale.
        epoch = max(epoch, report.epoch)
        worker.pool = report.pool
        worker.capacity = report.capacity
        worker.lastSeen = now
        worker.running = running
        stoppedRuns[report.worker] = stoppedRuns[report.worker]?.filter { running[$0.key] == $0.value }
        if stoppedRuns[report.worker]?.isEmpty == true { stoppedRuns[report.worker] = nil }
        worker.counts = [:]
        for session in report.sessions {
            // A session another worker holds is not this one's to tell of (a worker paused past
            // its lease and back, or a report that lags behind an assignment, an old epoch; a
            // forged one): its counts and resume are refused; it is sent its assignment again,
            // which stops it there.
            if let holder = placement[session.key], holder != report.worker,
                !(move.map { $0.key == session.key && $0.from == report.worker } ?? false)
            {
                actions.append(
                    .refuse(
                        counter: "refused.claim",
                        reason: "worker \(report.worker) (epoch \(report.epoch)) reports \(session.key) "
                            + "(run \(session.run)), which worker \(holder) holds: not taken"))
                continue
            }
            // The worker that reports a session at its run is the one that runs it (a worker
            // paused past its lease reports nothing of its sessions; one handing a session over
            // reports it until it has let it go): its word is the latest. A run it tells no
            // resume of (too many holes) is rebuilt nowhere else.
            if plans[session.key]?.run == session.run {
                let given = session.resume.map { WorkerAssignment.GivenResume(run: session.run, resume: $0) }
                if resumes[session.key] != given {
                    resumes[session.key] = given
                    actions.append(.saveResume(session.key, given))
                }
            }
            if let clean = session.repCount, let rejected = session.rejectedCount {
                worker.counts[session.key] = (clean, rejected)
                lastCounts[session.key] = (session.run, clean, rejected)
            }
        }
        workers[report.worker] = worker
        if isNew { actions.append(.notice("worker \(report.worker) joined pool \(report.pool)")) }
        // A session it runs at its planned run is where it is (a restarted coordinator learns
        // the placement from the heartbeats).
        for (key, run) in running where plans[key]?.run == run && placement[key] == nil {
            placement[key] = report.worker
        }
        placeWaiting(now: now, into: &actions)
        let desired = assigned(to: report.worker)
        if desired != worker.lastSent {
            send(to: report.worker, now: now, into: &actions)
        } else if !shows(desired, running), now - worker.lastSentAt >= configuration.resendInterval {
            send(to: report.worker, now: now, into: &actions)
        }
        settle(into: &actions)
        rebalance(now: now, into: &actions)
    }

    /// Moves time to `now`: workers silent for the lease are gone, sessions waiting are placed,
    /// commands unconfirmed past their wait are answered.
    public mutating func tick(now: Duration, into actions: inout [Action]) {
        for (name, worker) in workers where now - worker.lastSeen >= configuration.lease {
            workers[name] = nil
            let lost = placement.filter { $0.value == name }.keys.sorted()
            for key in lost { placement[key] = nil }
            actions.append(
                .notice(
                    "worker \(name) silent for \(configuration.lease): gone"
                        + (lost.isEmpty
                            ? ""
                            : ", its sessions \(lost.map(\.description).joined(separator: ", ")) wait for another")
                ))
        }
        placeWaiting(now: now, into: &actions)
        settle(into: &actions)
        rebalance(now: now, into: &actions)
        var index = 0
        while index < pending.count {
            guard pending[index].deadline <= now else {
                index += 1
                continue
            }
            let waited = pending.remove(at: index)
            var answer = waited.done
            answer.outcome = .notConfirmed
            answer.message =
                "\(waited.done.message), decided; worker \(waited.worker) did not confirm within \(configuration.confirmWait)"
            self.answer(answer, to: waited.peers, into: &actions)
        }
    }

    /// When ``tick(now:into:)`` has something to do next (`nil`: nothing until a message).
    public var nextDeadline: Duration? {
        var times = pending.map(\.deadline) + workers.values.map { $0.lastSeen + configuration.lease }
        if let move { times.append(move.since + moveTimeout) }
        if !graceIsOver, plans.keys.contains(where: { placement[$0] == nil }) { times.append(graceEnds) }
        return times.min()
    }

    /// Every session of the site, by camera and name.
    public var statuses: [SessionStatus] {
        plans.keys.sorted().map { key in
            let plan = plans[key]!
            // A session on its way is where it still runs until the worker it leaves gave it up.
            let worker = move.flatMap { $0.key == key && !$0.handedOver ? $0.from : nil } ?? placement[key]
            let state: SessionStatus.State =
                worker.flatMap { workers[$0]?.running[key] } == plan.run
                ? .running : worker == nil ? .waiting : .assigned
            let counts = state == .running ? worker.flatMap { workers[$0]?.counts[key] } : nil
            return SessionStatus(
                plan: plan, worker: worker, state: state, repCount: counts?.0, rejectedCount: counts?.1)
        }
    }

    /// The connection the live worker named `worker` reports from (`nil`: no live worker has
    /// that name): a report under the name from another connection is a restart of the worker
    /// only if this one is gone.
    public func livePeer(of worker: String, now: Duration) -> Peer? {
        guard let known = workers[worker], now - known.lastSeen < configuration.lease else { return nil }
        return known.peer
    }

    /// The live workers' names, sorted.
    public var liveWorkers: [String] { workers.keys.sorted() }

    /// The sessions `worker` is to host: those placed on it, but a session moving to it only
    /// once the worker it leaves has given it up.
    private func assigned(to worker: String) -> [SessionPlan] {
        placement.filter { key, placed in
            placed == worker && !(move.map { !$0.handedOver && $0.key == key && $0.to == placed } ?? false)
        }.keys.sorted().map { plans[$0]! }
    }

    private func shows(_ desired: [SessionPlan], _ running: [SessionKey: UInt64]) -> Bool {
        running.count == desired.count && desired.allSatisfy { running[$0.key] == $0.run }
    }

    private mutating func send(to name: String, now: Duration, into actions: inout [Action]) {
        guard var worker = workers[name] else { return }
        epoch += 1
        let sessions = assigned(to: name)
        actions.append(.saveCounters(nextRun: nextRun, epoch: epoch))
        actions.append(
            .assign(
                WorkerAssignment(
                    epoch: epoch, sessions: sessions, stopped: stoppedRuns[name] ?? [:],
                    resumes: resumes.filter { key, given in
                        sessions.contains { $0.key == key && $0.run == given.run }
                    }),
                worker: name, to: worker.peer))
        worker.lastSent = sessions
        worker.lastSentAt = now
        workers[name] = worker
    }

    /// The worker for `plan`, or `nil`.
    private func place(_ plan: SessionPlan, now: Duration) -> String? {
        var load: [String: Int] = [:]
        var cameras: [String: Set<String>] = [:]
        for (key, worker) in placement {
            load[worker, default: 0] += 1
            cameras[worker, default: []].insert(key.camera)
        }
        let candidates = workers.filter { name, worker in
            worker.pool == plan.pool && (plan.worker == nil || plan.worker == name)
                && load[name, default: 0] < worker.capacity
        }
        return candidates.keys.min { a, b in
            let sameCameraA = cameras[a]?.contains(plan.key.camera) == true
            let sameCameraB = cameras[b]?.contains(plan.key.camera) == true
            if sameCameraA != sameCameraB { return sameCameraA }
            let roomA = workers[a]!.capacity - load[a, default: 0]
            let roomB = workers[b]!.capacity - load[b, default: 0]
            if roomA != roomB { return roomA > roomB }
            return a < b
        }
    }

    /// Places the sessions no live worker hosts, once the grace after a start is over.
    private mutating func placeWaiting(now: Duration, into actions: inout [Action]) {
        guard now >= graceEnds else { return }
        graceIsOver = true
        var changed: Set<String> = []
        for key in plans.keys.sorted() where placement[key] == nil {
            guard let worker = place(plans[key]!, now: now) else { continue }
            placement[key] = worker
            changed.insert(worker)
            actions.append(.notice("\(key) (run \(plans[key]!.run)) goes to worker \(worker)"))
        }
        for worker in changed.sorted() { send(to: worker, now: now, into: &actions) }
    }

    // MARK: - Rebalancing

    /// Moves the move under way on, or starts the next one where a pool is uneven.
    private mutating func rebalance(now: Duration, into actions: inout [Action]) {
        if var current = move {
            guard plans[current.key]?.run == current.run, placement[current.key] == current.to,
                workers[current.to] != nil
            else {
                // Stopped, reset or placed elsewhere meanwhile: nothing more to do for it.
                move = nil
                return rebalance(now: now, into: &actions)
            }
            if now - current.since >= moveTimeout {
                // A worker that does not do its part: the session stays where it can run, and
                // the next move may begin (one stuck move must not stop every pool's).
                move = nil
                actions.append(
                    .notice(
                        "\(current.key): its move to worker \(current.to) is given up after \(moveTimeout)"
                            + (current.handedOver ? "" : "; it stays on worker \(current.from)")))
                if !current.handedOver, workers[current.from] != nil {
                    placement[current.key] = current.from
                    send(to: current.from, now: now, into: &actions)
                }
                return
            }
            if !current.handedOver {
                guard workers[current.from]?.running[current.key] != current.run else { return }
                current.handedOver = true
                move = current
                send(to: current.to, now: now, into: &actions)
                return
            }
            guard workers[current.to]?.running[current.key] == current.run else { return }
            move = nil
            moves += 1
            actions.append(.notice("\(current.key) (run \(current.run)) moved to worker \(current.to)"))
        }
        // One worker (the usual small site) has nothing to even out: not even a count is made.
        guard graceIsOver, workers.count >= 2, let next = nextMove(now: now) else { return }
        move = next
        placement[next.key] = next.to
        actions.append(
            .notice(
                "\(next.key) (run \(next.run)) moves from worker \(next.from) to worker \(next.to): its pool is uneven"
            ))
        send(to: next.from, now: now, into: &actions)
    }

    /// The session to move next, if a pool is uneven: from its busiest live worker to its least
    /// busy one with room, when they differ by two sessions or more.
    private func nextMove(now: Duration) -> Move? {
        var load: [String: Int] = [:]
        for worker in placement.values { load[worker, default: 0] += 1 }
        let waiting = Set(
            pending.map { waiting -> SessionKey in
                switch waiting.expectation {
                case .running(let key, _), .gone(let key, _): key
                }
            })
        for pool in Set(workers.values.map(\.pool)).sorted() {
            let members = workers.filter { $0.value.pool == pool }.keys.sorted()
            guard
                let from = members.max(by: { (load[$0, default: 0], $1) < (load[$1, default: 0], $0) }),
                let to = members.filter({ load[$0, default: 0] < workers[$0]!.capacity })
                    .min(by: { (load[$0, default: 0], $0) < (load[$1, default: 0], $1) }),
                load[from, default: 0] - load[to, default: 0] >= 2
            else { continue }
            // Sessions that run where they are placed, name no worker, and wait for no command.
            let onFrom = placement.filter { $0.value == from }.keys
            let movable = onFrom.filter { key in
                plans[key]?.worker == nil && !waiting.contains(key)
                    && workers[from]?.running[key] == plans[key]?.run
            }
            let camerasThere = Set(placement.filter { $0.value == to }.keys.map(\.camera))
            var sessionsPerCamera: [String: Int] = [:]
            for key in onFrom { sessionsPerCamera[key.camera, default: 0] += 1 }
            // A camera's sessions are split only where the other worker has that camera already:
            // a camera moves whole, when all of it fits in the difference.
            let difference = load[from, default: 0] - load[to, default: 0]
            let keepsCamerasTogether = movable.filter { key in
                camerasThere.contains(key.camera)
                    || sessionsPerCamera[key.camera, default: 0] * 2 <= difference
            }
            guard
                let key = keepsCamerasTogether.min(by: { a, b in
                    let joinsA = camerasThere.contains(a.camera)
                    let joinsB = camerasThere.contains(b.camera)
                    if joinsA != joinsB { return joinsA }
                    let groupA = sessionsPerCamera[a.camera, default: 0]
                    let groupB = sessionsPerCamera[b.camera, default: 0]
                    if groupA != groupB { return groupA < groupB }
                    return a < b
                })
            else { continue }
            return Move(key: key, run: plans[key]!.run, from: from, to: to, since: now)
        }
        return nil
    }

    /// A command for a session on its way: the move is given up, and the session stays with
    /// the worker that still has it.
    private mutating func cancelMove(of key: SessionKey, now: Duration, into actions: inout [Action]) {
        guard let current = move, current.key == key else { return }
        move = nil
        guard !current.handedOver, workers[current.from] != nil, placement[key] == current.to else { return }
        placement[key] = current.from
        actions.append(.notice("\(key): its move to worker \(current.to) is given up for a command"))
        send(to: current.from, now: now, into: &actions)
    }

    /// Answers the commands whose worker now shows what they decided.
    private mutating func settle(into actions: inout [Action]) {
        var index = 0
        while index < pending.count {
            let waiting = pending[index]
            let running = workers[waiting.worker]?.running
            let confirmed: Bool
            switch waiting.expectation {
            case .running(let key, let run): confirmed = running?[key] == run
            case .gone(let key, let run): confirmed = running.map { $0[key] != run } ?? false
            }
            guard confirmed else {
                index += 1
                continue
            }
            pending.remove(at: index)
            answer(waiting.done, to: waiting.peers, into: &actions)
        }
    }

    private mutating func answer(_ answer: ControlAnswer, to peers: [Peer], into actions: inout [Action]) {
        defer { for peer in peers { actions.append(.answer(answer, to: peer)) } }
        // Only what changed a session is kept for a retry: a refusal (no live worker yet...) or
        // a list is decided again when asked again.
        guard [.started, .stopped, .reset, .baselineStarted, .notConfirmed].contains(answer.outcome) else {
            return
        }
        if answers[answer.id] == nil {
            answerOrder.append(answer.id)
            if answerOrder.count > configuration.rememberedAnswers {
                answers[answerOrder.removeFirst()] = nil
            }
        }
        answers[answer.id] = answer
    }
}
