import KinesiaBus
public import KinesiaClient
import KinesiaControl
import KinesiaMotion
public import KinesiaPublishJournal
public import KinesiaService
import KinesiaSystem
import KinesiaWire

/// A pool worker (`kinesia worker --pool NAME`): takes its sessions from the coordinator at
/// runtime.
///
/// It connects a DEALER to the coordinator's control socket (``BusAddress/controlEndpoint``),
/// reports every second (and at once after a change) who it is, its pool, its room and the
/// sessions it runs (``WorkerReport``: a session counts once its service is subscribed and its
/// state restored, so a confirmed start is a session analysing), and applies each ``WorkerAssignment`` newer than the
/// last it applied: a session that is new (or at a new run) starts, one that is gone (or at an
/// old run) stops. A session gone ends its run (`runEnded`) only when the assignment says a
/// stop ended it (``WorkerAssignment/stopped``); otherwise it was moved to another worker (this
/// one was taken for dead, paused past its lease), and its run goes on there. Each session runs in a ``WorkerService`` of its own, on its own thread,
/// with its own `health/<worker>-<camera>.<session>/` report: starting or stopping one never
/// pauses another, and each keeps the exactly-once journal, checkpoints and replay of a
/// worker. A new run is a new stream of events (the run is part of the session's identity);
/// the same run after a restart resumes its stream from its checkpoint.
///
/// A session stopped without ending its run has its streams announced as moving for 10 s in the
/// worker's own health report (``MovingSessions``): a consumer that saw one of its events live,
/// and never a heartbeat naming its stream, waits for the worker that takes the run over.
///
/// A session whose service fails (its state directory unusable...) is reported gone, and tried
/// again after 5 s while the coordinator still gives it. Its own `health/<name>/` report counts
/// the sessions hosted, the assignments applied and refused, and the failures.
public struct PoolWorkerService: Sendable {
    /// What a pool worker is given to run.
    public struct Configuration: Sendable {
        /// The bus, the process name and whether the bus is insecure.
        public var process: BusProcessIdentity
        /// The pool it serves.
        public var pool: String
        /// How many sessions it hosts at most.
        public var capacity: Int
        /// Snapshots per second of pose time, at most.
        public var snapshotRate: Double
        /// The journal of its sessions (or none).
        public var journal: JournalOptions
        /// How long a hole in a camera's live poses is waited for.
        public var holeWait: Duration
        /// The environment the state directory's default is found in.
        public var environment: [String: String]
        /// How often it reports to the coordinator.
        public var reportInterval: Duration

        /// A configuration.
        public init(
            process: BusProcessIdentity, pool: String, capacity: Int, snapshotRate: Double = 15,
            journal: JournalOptions, holeWait: Duration = .milliseconds(500), environment: [String: String],
            reportInterval: Duration = .seconds(1)
        ) {
            self.process = process
            self.pool = pool
            self.capacity = capacity
            self.snapshotRate = snapshotRate
            self.journal = journal
            self.holeWait = holeWait
            self.environment = environment
            self.reportInterval = reportInterval
        }
    }

    /// How long a failed session waits before it is started again.
    static let retryAfter: Duration = .seconds(5)

    /// What it runs with.
    public let configuration: Configuration
    private let log: Logger
    private let startClock: @Sendable () -> ElapsedClock

    /// A pool worker that logs on `log` and times its reports on `clock`.
    public init(_ configuration: Configuration, log: Logger, clock: some Clock<Duration> = ContinuousClock())
    {
        self.configuration = configuration
        self.log = log
        startClock = { ElapsedClock(clock) }
    }

    /// Runs until `stop` is requested, then stops its sessions (each finishes the poses it has).
    ///
    /// - Throws: the socket errors of a bus that cannot be reached.
    public func run(until stop: StopToken) throws {
        let elapsed = startClock()
        let bus = configuration.process.bus
        let name = configuration.process.name
        // One context for the worker and every session it hosts: one libzmq I/O thread and
        // reaper in all, not a pair per session. Ended last, once every session returned.
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let publisher = try BusPublisher(
            context: zmq, bus: bus, linger: .seconds(1), connectionTimeout: .seconds(2))
        defer { publisher.close() }
        let control = try ZMQSocket(.dealer, context: zmq, linger: .zero)
        defer { control.close() }
        try control.secure(for: bus)  // over TCP: its worker key, the broker's as the server's
        try control.connect(bus.controlEndpoint)
        var health = try configuration.process.healthPublisher(
            role: "pool-worker", problems: { log.warning($0) })

        var hosted: [SessionKey: HostedSession] = [:]
        // Sessions asked to stop and not returned yet, with when their wait is over: the loop
        // never waits for them (it goes on reporting, so that its lease holds), and a session
        // of the same key starts only once they have returned (its run's end is announced
        // before the next run's start), or their wait is over.
        // A session stopped gracefully (moved, stopped, reset) is reported at its run until its
        // service has returned and let its journal go: the coordinator hands it over only then.
        // One stopped at a lapse of the lease is not (it publishes nothing, and is no longer
        // this worker's to claim).
        var stopping: [(session: HostedSession, until: Duration, reported: Bool)] = []
        var failed: [SessionKey: (run: UInt64, at: Duration)] = [:]
        var desired: [SessionPlan] = []
        var stoppedRuns: [SessionKey: UInt64] = [:]
        var resumes: [SessionKey: RunResume] = [:]
        // Sessions stopped without ending their runs: their streams are announced as moving.
        var moving = MovingSessions()
        var epoch: UInt64 = 0
        // Its lease: sessions start only while it holds, and stop by themselves once it lapsed.
        var lease = WorkerLease()
        let fence = SessionFence(clock: elapsed)
        // After a lapse, the assignments already queued are older than the coordinator's
        // decisions since (its sessions may be elsewhere now): only those read after a new
        // grant count.
        var awaitingGrant = false
        var toldUngranted = false
        // Its room, measured: what its sessions cost, and what the box has left.
        var estimate = CapacityEstimate(
            ceiling: configuration.capacity, processors: ProcessorUsage.onlineProcessors)
        var counters: [String: Int] = [
            "assignments": 0, "assignmentsStale": 0, "malformed": 0, "sessionsStarted": 0,
            "sessionsStopped": 0,
            "sessionFailures": 0, "leaseLapses": 0, "assignmentsBeforeLease": 0,
        ]
        func healthCounters() -> [String: Int] {
            var values = counters
            values["sessions"] = hosted.count
            values["capacity"] = estimate.capacity(sessions: hosted.count)
            values["capacityCeiling"] = configuration.capacity
            values["epoch"] = Int(clamping: epoch)
            return values
        }
        // Every second; every 250 ms while a report waits for its answer for over half a second
        // (a coordinator restarting: its first grant comes sooner).
        func reportInterval() -> Duration {
            guard let waited = lease.unansweredFor(at: elapsed.now), waited > .milliseconds(500) else {
                return configuration.reportInterval
            }
            return min(configuration.reportInterval, .milliseconds(250))
        }
        // The sessions last reported live: a session that becomes live is reported at once; and
        // so is a run whose resume changed (its first pose, a hole given up): a worker on another
        // box rebuilds it from the coordinator's latest.
        var reportedLive: Set<SessionKey> = []
        var reportedResumes: [ObjectIdentifier: UInt64] = [:]
        // The sessions a report carries, with their resumes: the live ones and those still
        // stopping that are reported at their run. A grant acknowledges exactly these (a session
        // stopped or reset just after its run's first pose waits for its resume to be kept: left
        // out, it waited its whole bound, and the stop or reset as long).
        func reportedSessions() -> [HostedSession] {
            hosted.values.filter(\.isLive)
                + stopping.filter { $0.reported && !$0.session.hasEnded }.map(\.session)
        }
        func resumeVersions() -> [ObjectIdentifier: UInt64] {
            Dictionary(
                reportedSessions().map { (ObjectIdentifier($0), $0.resume.version) },
                uniquingKeysWith: { first, _ in first })
        }
        // The resume versions each report carried: its grant tells the sessions the
        // coordinator has them (a session waits for that, boundedly, before it publishes what a
        // new first pose or a hole given up causes).
        var carried: [(report: UInt64, versions: [(session: HostedSession, version: UInt64)])] = []
        func report() {
            reportedLive = Set(hosted.filter { $0.value.isLive }.keys)
            // Each resume read once with its version: a grant never acknowledges a version newer
            // than the resume the report carried.
            let reported = reportedSessions().map { (session: $0, resume: $0.resume) }
            reportedResumes = Dictionary(
                reported.map { (ObjectIdentifier($0.session), $0.resume.version) },
                uniquingKeysWith: { first, _ in first })
            let running = reported.map { session, resume in
                WorkerReport.Running(
                    key: session.plan.key, run: session.plan.run, repCount: session.counts?.repCount,
                    rejectedCount: session.counts?.rejectedCount, resume: resume.resume)
            }.sorted { $0.key < $1.key }
            estimate.add(ProcessorUsage.sample(), at: elapsed.now, sessions: hosted.count)
            let number = lease.reportSent(at: elapsed.now)
            let message = ControlMessage.workerReport(
                WorkerReport(
                    worker: name, pool: configuration.pool,
                    capacity: estimate.capacity(sessions: hosted.count),
                    sessions: running,
                    epoch: epoch, number: number))
            _ = try? control.trySend([message.encoded()])
            carried.append((number, reported.map { ($0.session, $0.resume.version) }))
            if carried.count > 64 { carried.removeFirst(carried.count - 64) }
        }
        func collectStopped() -> Bool {
            var changed = false
            stopping.removeAll { entry in
                if entry.session.hasEnded {
                    counters["sessionsStopped", default: 0] += 1
                    log.info("session \(entry.session.plan.key) (run \(entry.session.plan.run)) stopped")
                    changed = true
                    return true
                }
                guard elapsed.now >= entry.until else { return false }
                log.warning("session \(entry.session.plan.key) did not stop within 3 s")
                changed = true
                return true
            }
            return changed
        }
        func reconcile() -> Bool {
            var changed = collectStopped()
            let wanted = Dictionary(desired.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
            // A session given up without ending its run (moved away) whose run a later assignment
            // ends, while it is still stopping (a stop or reset that caught up with a move): its
            // run ends here, as its service finishes.
            for entry in stopping where !entry.session.hasEnded {
                let plan = entry.session.plan
                if stoppedRuns[plan.key] == plan.run {
                    entry.session.upgradeStop(endingRun: .stopped)
                } else if let next = wanted[plan.key], next.run != plan.run {
                    entry.session.upgradeStop(endingRun: .reset)
                }
            }
            for (key, session) in hosted where wanted[key] != session.plan || session.hasEnded {
                if session.hasEnded, let failure = session.failureDescription {
                    counters["sessionFailures", default: 0] += 1
                    failed[key] = (session.plan.run, elapsed.now)
                    log.error("session \(key) (run \(session.plan.run)) failed: \(failure)")
                } else {
                    // Gone from the assignment: stopped when a stop ended its run, moved
                    // otherwise (its run goes on elsewhere); at another run: reset; the same
                    // run (a plan changed otherwise): it goes on.
                    let ending: RunRecord.RunEnd.Reason? =
                        if let next = wanted[key] {
                            next.run != session.plan.run ? .reset : nil
                        } else {
                            stoppedRuns[key] == session.plan.run ? .stopped : nil
                        }
                    session.requestStop(endingRun: ending)
                    if ending == nil {
                        moving.handedOver(key, resume: session.resume.resume, at: elapsed.now)
                    }
                    stopping.append((session, elapsed.now + .seconds(3), true))
                }
                hosted[key] = nil
                changed = true
            }
            for plan in desired where hosted[plan.key] == nil && lease.holds(at: elapsed.now) {
                guard !stopping.contains(where: { $0.session.plan.key == plan.key }) else { continue }
                if let failure = failed[plan.key], failure.run == plan.run,
                    elapsed.now - failure.at < Self.retryAfter
                {
                    continue
                }
                guard hosted.count < configuration.capacity else {
                    log.warning("session \(plan.key) not started: \(configuration.capacity) sessions already")
                    continue
                }
                hosted[plan.key] = start(
                    plan, resume: resumes[plan.key], context: zmq, fencing: (fence, epoch))
                moving.hostedAgain(plan.key)
                counters["sessionsStarted", default: 0] += 1
                changed = true
            }
            return changed
        }

        log.info(
            "pool worker of \(configuration.pool) (room for \(configuration.capacity)) reporting to \(bus.controlEndpoint)"
        )
        var nextReport = elapsed.now
        while !stop.isRequested {
            if lease.heldUntil != nil, !lease.holds(at: elapsed.now) {
                // Paused, hung or cut off past its lease: its sessions found the fence closed
                // already (they publish nothing more); they are stopped without ending their runs,
                // and the coordinator's next word decides where they run.
                counters["leaseLapses", default: 0] += 1
                let late = elapsed.now - lease.heldUntil!
                log.warning(
                    "lease lapsed \(late.secondsText) s ago (not renewed by the coordinator in time): "
                        + "\(hosted.count) session(s) stop, waiting for the coordinator")
                lease.lapse()
                fence.hold(until: nil)
                awaitingGrant = true
                desired = []
                for (key, session) in hosted {
                    session.requestStop()
                    moving.handedOver(key, resume: session.resume.resume, at: elapsed.now)
                    stopping.append((session, elapsed.now + .seconds(3), false))
                }
                hosted = [:]
                nextReport = elapsed.now
            }
            let movingNow = moving.streams(at: elapsed.now)
            if movingNow != health.moving {
                // Said at once: a consumer that saw a stopped session's event live must hear it
                // before this worker, maybe about to die, is gone.
                health.moving = movingNow
                health.publish(counters: healthCounters(), via: publisher)
            } else {
                health.publishIfDue(counters: healthCounters, via: publisher)
            }
            let stopped = stopping.contains { $0.session.hasEnded || elapsed.now >= $0.until }
            if elapsed.now >= nextReport || stopped
                || Set(hosted.filter({ $0.value.isLive }).keys) != reportedLive
                || resumeVersions() != reportedResumes
            {
                if reconcile() { log.debug("sessions: \(hosted.keys.sorted().map(\.description))") }
                report()
                nextReport = elapsed.now + reportInterval()
                if !toldUngranted, let waited = lease.unansweredFor(at: elapsed.now), waited > .seconds(5) {
                    toldUngranted = true
                    log.warning(
                        "no lease granted for 5 s: the coordinator is away, or another worker is live as \(name)"
                    )
                }
            }
            // A session starting is confirmed as soon as it is live: looked at every 5 ms.
            let starting =
                hosted.values.contains { (!$0.isLive && !$0.hasEnded) || $0.resumeKept.awaits }
                || !stopping.isEmpty
            let wait = min(.milliseconds(starting ? 5 : 100), max(.zero, nextReport - elapsed.now))
            guard let frames = try control.receive(timeout: wait) else { continue }
            let message = frames.count == 1 ? try? ControlMessage(decoding: frames[0]) : nil
            if case .lease(let grant)? = message {
                for entry in carried where entry.report == grant.report {
                    for (session, version) in entry.versions { session.resumeKept.acknowledge(version) }
                }
                carried.removeAll { $0.report <= grant.report }
                if lease.granted(grant) {
                    fence.hold(until: lease.heldUntil)
                    awaitingGrant = false
                    toldUngranted = false
                }
                continue
            }
            guard case .assignment(let assignment)? = message else {
                counters["malformed", default: 0] += 1
                log.warning("a message from the coordinator that is not an assignment: ignored")
                continue
            }
            guard !awaitingGrant else {
                counters["assignmentsBeforeLease", default: 0] += 1
                continue
            }
            guard assignment.epoch > epoch else {
                counters["assignmentsStale", default: 0] += 1
                continue
            }
            counters["assignments", default: 0] += 1
            epoch = assignment.epoch
            desired = assignment.sessions.filter { $0.pool == configuration.pool }
            stoppedRuns = assignment.stopped
            resumes = [:]
            for plan in desired { resumes[plan.key] = assignment.resume(of: plan) }
            _ = reconcile()
            report()
            nextReport = elapsed.now + reportInterval()
        }
        for session in hosted.values { session.requestStop() }
        for session in Array(hosted.values) + stopping.map(\.session)
        where !session.wait(timeout: .seconds(3)) {
            log.warning("session \(session.plan.key) did not stop within 3 s")
        }
        health.publish(counters: healthCounters(), via: publisher)
        log.info("stopped (\(hosted.count) session(s) stopped)")
    }

    /// Starts `plan`'s own worker service.
    private func start(
        _ plan: SessionPlan, resume: RunResume?, context: ZMQContext,
        fencing: (fence: SessionFence, epoch: UInt64)
    ) -> HostedSession {
        let analysis: WorkerSession.Analysis =
            switch plan.analysis {
            case .left: .side(.left)
            case .right: .side(.right)
            case .analytics: .analytics
            }
        let session = WorkerSession(
            camera: plan.key.camera, name: plan.key.name, exercise: plan.exercise, analysis: analysis,
            run: plan.run, baselineReps: plan.baselineReps)
        var process = configuration.process
        process.name = BusProcessIdentity.derivedName(process.name, "\(plan.key.camera).\(plan.key.name)")
        let service = WorkerService(
            WorkerService.Configuration(
                process: process, sessions: [session], snapshotRate: configuration.snapshotRate,
                journal: configuration.journal, holeWait: configuration.holeWait,
                environment: configuration.environment, plans: [plan], fencing: fencing,
                resumes: resume.map { [plan.key: $0] } ?? [:]),
            log: log)
        log.info(
            "session \(plan.key) (run \(plan.run), \(plan.exercise.id) \(plan.analysis.rawValue)"
                + (plan.patient.map { ", patient \($0)" } ?? "") + ") starting as \(process.name)")
        return HostedSession(plan: plan, service: service, context: context)
    }
}
