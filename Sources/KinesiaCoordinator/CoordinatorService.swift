import KinesiaBus
public import KinesiaClient
public import KinesiaControl
public import KinesiaService
import KinesiaStore
import KinesiaSystem
import KinesiaWire

/// The coordinator process (`kinesia coordinator`): the control plane's one address, beside
/// the broker.
///
/// The service is the socket loop only: it binds a ROUTER on the bus's control endpoint
/// (``BusAddress/controlEndpoint``: `control.sock` in the bus directory, private to the
/// user), reads each message (``ControlMessage``), hands commands and pool workers'
/// heartbeats to a ``CoordinatorCore`` (which makes every decision), and performs the
/// actions it returns in order: the plans and counters go to SQLite (``CoordinatorStore``)
/// before the answers and assignments that follow them are sent. A message that is not a
/// control message is answered `invalid` (when it has an id to answer) and counted; it never
/// stops the loop. Its `health/<name>/` report, about once a second, counts requests,
/// answers, malformed messages, live workers and sessions.
///
/// ```swift
/// let service = CoordinatorService(configuration, log: log)
/// try await ServiceRunner(logger: log).run(BlockingService { stop in try service.run(until: stop) })
/// ```
public struct CoordinatorService: Sendable {
    /// What a coordinator is given to run.
    public struct Configuration: Sendable {
        /// The bus, the process name and whether the bus is insecure.
        public var process: BusProcessIdentity
        /// The state directory (`coordinator.db` is kept there).
        public var stateDirectory: String
        /// The leases and waits.
        public var core: CoordinatorCore.Configuration
        /// Who it admits on its control socket: on a TCP bus, the broker's key and allowed keys
        /// (the coordinator lives beside the broker, behind the same CURVE and ZAP), or
        /// `--insecure`; the user's own bus directory otherwise.
        package var security: BrokerSecurity

        /// A configuration.
        package init(
            process: BusProcessIdentity, stateDirectory: String,
            core: CoordinatorCore.Configuration = .init(),
            security: BrokerSecurity = .localUser
        ) {
            self.process = process
            self.stateDirectory = stateDirectory
            self.core = core
            self.security = security
        }
    }

    /// What it runs with.
    public let configuration: Configuration
    private let log: Logger
    private let startClock: @Sendable () -> ElapsedClock

    /// A coordinator that logs on `log` and times its leases on `clock`.
    public init(_ configuration: Configuration, log: Logger, clock: some Clock<Duration> = ContinuousClock())
    {
        self.configuration = configuration
        self.log = log
        startClock = { ElapsedClock(clock) }
    }

    /// Runs until `stop` is requested.
    ///
    /// - Throws: ``CoordinatorError`` when the state directory, the database, the control
    ///   endpoint or the bus cannot be used.
    public func run(until stop: StopToken) throws(CoordinatorError) {
        let elapsed = startClock()
        let bus = configuration.process.bus
        let security = configuration.security
        if case .tcp = bus.kind, security == .localUser {
            throw .insecureTCP(bus.description)
        }
        do throws(PrivateDirectoryError) {
            try PrivateDirectory.open(configuration.stateDirectory, creating: true).close()
        } catch {
            throw .stateDirectory(error)
        }
        let store: CoordinatorStore
        let kept:
            (
                plans: [SessionPlan], nextRun: UInt64, epoch: UInt64, answers: [ControlAnswer],
                resumes: [SessionKey: WorkerAssignment.GivenResume], unreadable: [String]
            )
        let databasePath = configuration.stateDirectory + "/coordinator.db"
        do throws(SQLiteError) {
            store = try CoordinatorStore(path: databasePath)
            kept = try store.load()
        } catch {
            throw .database(databasePath, error)
        }
        defer { store.close() }
        for message in kept.unreadable { log.error(message) }
        var core = CoordinatorCore(
            plans: kept.plans, nextRun: kept.nextRun, epoch: kept.epoch, now: elapsed.now,
            configuration: configuration.core, answers: kept.answers, resumes: kept.resumes)

        func onBus<Value: ~Copyable>(_ body: () throws(ZMQError) -> Value) throws(CoordinatorError) -> Value {
            try CoordinatorError.catching({ (error: ZMQError) in .bus(bus.description, error) }, body)
        }
        let zmq = try onBus { () throws(ZMQError) in try ZMQContext() }
        defer { zmq.terminate() }
        // Over TCP, the site's keys are admitted as the broker admits them (the same allowed-keys
        // directory, read again at each connection); what each may send is decided per message
        // from its ZAP user id (``ControlPeer``).
        let zap: ZAPHandler?
        if case .tcp = bus.kind {
            let admission = BrokerAdmission(security: security, ownUserID: ProcessIdentity.effectiveUserID)
            let log = self.log
            do throws(ZMQError) {
                zap = try ZAPHandler(context: zmq) { request in
                    var allowed = AllowedKeys()
                    if case .curve(_, let directory) = security, request.mechanism == "CURVE" {
                        allowed = AllowedKeys.load(directory: directory)
                    }
                    switch admission.decide(request, allowed: allowed) {
                    case .admit(let userID): return .admit(userID: userID)
                    case .refuse(let reason, let text):
                        log.warning("control socket: refused \(text)")
                        return .refuse(reason.rawValue)
                    }
                }
            } catch {
                throw .authentication(error)
            }
        } else {
            zap = nil
        }
        defer { zap?.stop() }
        // Its own health goes to the broker with the broker's key (admitted as the broker).
        var ownBus = bus
        if case .curve(let key, _) = security {
            ownBus.credentials = BusCredentials(key: key, serverKey: key.publicKey)
        }
        let publisher = try onBus { () throws(ZMQError) in
            try BusPublisher(context: zmq, bus: ownBus, linger: .seconds(1), connectionTimeout: .seconds(2))
        }
        defer { publisher.close() }
        // The ingests' heartbeats: which cameras publish (a start for a camera nobody publishes
        // says so in its answer).
        let heartbeats = try onBus { () throws(ZMQError) in
            try BusSubscriber(context: zmq, bus: ownBus, prefixes: [.kind(.health)])
        }
        defer { heartbeats.close() }
        let router = try onBus { () throws(ZMQError) in try ZMQSocket(.router, context: zmq, linger: .zero) }
        defer { router.close() }
        // A peer gone since it asked: its answer is dropped, not queued.
        try onBus { () throws(ZMQError) in try router.set(.routerMandatory, false) }
        do throws(ZMQError) {
            if case .tcp = bus.kind {
                try router.set(.zapDomain, BrokerAdmission.zapDomain)
                if case .curve(let key, _) = security {
                    try router.makeCurveServer(secretKey: key.keyPair.secretKey)
                }
                try router.bind(bus.controlEndpoint)
            } else {
                _ = try router.bindRestricted(bus.controlEndpoint)
            }
        } catch {
            throw .controlEndpoint(bus.controlEndpoint, error)
        }
        var poller = Poller()
        poller.add(router)
        poller.add(heartbeats.socket)
        var health = try CoordinatorError.catching(CoordinatorError.processName) { () throws(TopicError) in
            try configuration.process.healthPublisher(role: "coordinator", problems: { log.warning($0) })
        }
        var counters: [String: Int] = ["requests": 0, "malformed": 0, "workerReports": 0, "storeErrors": 0]
        // Over TCP, the key each worker name first reported with: a name is one key's.
        var workerKeys: [String: String] = [:]
        // A message refused: counted under `counter`, told for the first ten and every thousandth.
        func refuse(_ counter: String, _ warning: @autoclosure () -> String) {
            counters[counter, default: 0] += 1
            let refusals = counters[counter]!
            if refusals <= 10 || refusals % 1000 == 0 { log.warning(warning()) }
        }
        func healthCounters() -> [String: Int] {
            var values = counters
            values["workers"] = core.liveWorkers.count
            values["sessionsMoved"] = core.moves
            let statuses = core.statuses
            values["sessions"] = statuses.count
            for state in SessionStatus.State.allCases {
                values["sessions.\(state.rawValue)"] = statuses.count { $0.state == state }
            }
            return values
        }
        var actions: [CoordinatorCore.Action] = []
        func perform() {
            // What the message changed is kept first, in one transaction, then sent.
            let changes = actions.filter {
                switch $0 {
                case .savePlan, .removePlan, .saveCounters, .saveResume, .rememberRequest: true
                case .answer, .assign, .grantLease, .notice, .refuse, .announceRunEnd: false
                }
            }
            if !changes.isEmpty {
                keep { () throws(SQLiteError) in
                    try store.transaction { () throws(SQLiteError) in
                        for change in changes {
                            switch change {
                            case .savePlan(let plan): try store.save(plan)
                            case .removePlan(let key): try store.remove(key)
                            case .saveCounters(let nextRun, let epoch):
                                try store.save(nextRun: nextRun, epoch: epoch)
                            case .saveResume(let key, let given): try store.save(given, of: key)
                            case .rememberRequest(let answer):
                                try store.remember(answer, limit: configuration.core.rememberedAnswers)
                            case .answer, .assign, .grantLease, .notice, .refuse, .announceRunEnd: break
                            }
                        }
                    }
                }
            }
            for action in actions {
                switch action {
                case .answer(let answer, let peer):
                    counters["answers.\(answer.outcome.rawValue)", default: 0] += 1
                    _ = try? router.trySend([peer, ControlMessage.answer(answer).encoded()])
                case .assign(let assignment, let worker, let peer):
                    counters["assignments", default: 0] += 1
                    if (try? router.trySend([peer, ControlMessage.assignment(assignment).encoded()])) != true
                    {
                        log.warning(
                            "cannot send worker \(worker) its assignment (epoch \(assignment.epoch)) now")
                    }
                case .grantLease(let grant, let peer):
                    counters["leasesGranted", default: 0] += 1
                    _ = try? router.trySend([peer, ControlMessage.lease(grant).encoded()])
                case .savePlan, .removePlan, .saveCounters, .saveResume, .rememberRequest:
                    break  // kept above
                case .announceRunEnd(let end):
                    // On the session's own topic, as its worker would have announced it.
                    do {
                        let topic = try Topic.session(camera: end.key.camera, session: end.key.name)
                        _ = try publisher.publish(
                            json: RunRecord.ended(end).json(), kind: .session, on: topic)
                    } catch {
                        log.error("cannot announce the end of \(end.key)'s run \(end.run): \(error)")
                    }
                case .notice(let text):
                    log.notice(text)
                case .refuse(let counter, let reason):
                    refuse(counter, reason)
                }
            }
            actions.removeAll(keepingCapacity: true)
        }
        func keep(_ write: () throws(SQLiteError) -> Void) {
            do {
                try write()
            } catch {
                counters["storeErrors", default: 0] += 1
                log.error("cannot keep the desired state in \(store.path): \(error)")
            }
        }

        log.info(
            "coordinating on \(bus.controlEndpoint) with \(kept.plans.count) session(s) kept in \(store.path)"
        )
        while !stop.isRequested {
            health.publishIfDue(counters: healthCounters, via: publisher)
            let wait = min(
                .milliseconds(100), max(.zero, (core.nextDeadline ?? .seconds(1)) - elapsed.now))
            let ready = try onBus { () throws(ZMQError) in try poller.poll(timeout: wait) }
            var heard = 0
            while heard < 1000,
                let delivery = try onBus({ () throws(ZMQError) in try heartbeats.tryReceive() })
            {
                heard += 1
                guard case .message(let message, _) = delivery, case .health(let report) = message.body,
                    report.role == "ingest"
                else { continue }
                // Its streams say which camera (an ingest that journals announces them); its
                // default name says so too (`ingest-<camera>`, one without a journal).
                var cameras = (report.replay?.streams ?? []).filter { $0.topic.kind == .pose }
                    .compactMap(\.topic.camera)
                if report.process.hasPrefix("ingest-") { cameras.append(String(report.process.dropFirst(7))) }
                for camera in cameras { core.cameraPublishes(camera, now: elapsed.now) }
            }
            if ready.first?.contains(.readable) == true {
                var frames: [[UInt8]] = []
                var userID: String?
                while try onBus({ () throws(ZMQError) in try router.tryReceive(into: &frames, userID: &userID)
                }) {
                    guard frames.count == 2 else {
                        counters["malformed", default: 0] += 1
                        continue
                    }
                    let peer = frames[0]
                    let sender = ControlPeer(userID: userID, overTCP: bus.directory == nil)
                    do {
                        switch try ControlMessage(decoding: frames[1]) {
                        case .request(let request) where !sender.mayCommand:
                            counters["refused.request", default: 0] += 1
                            counters["answers.notAllowed", default: 0] += 1
                            log.warning(
                                "request \(request.id) from \(sender.description) refused: no control role")
                            let answer = ControlAnswer(
                                id: request.id, outcome: .notAllowed,
                                message:
                                    "\(sender.description) may not command sessions: it needs the control role "
                                    + "(kinesia keys new NAME --role control, its .pub in the allowed keys' control/)"
                            )
                            _ = try? router.trySend([peer, ControlMessage.answer(answer).encoded()])
                        case .request(let request):
                            counters["requests", default: 0] += 1
                            // What changes the site is told; a list (a dashboard polls) only at debug.
                            let line = "request \(request.id) from \(sender.description): \(request.verb)"
                            if case .list = request.command { log.debug(line) } else { log.info(line) }
                            core.receive(request, from: peer, now: elapsed.now, into: &actions)
                        case .workerReport where !sender.mayReport:
                            refuse(
                                "refused.report",
                                "a worker report from \(sender.description) refused: no worker role")
                        case .workerReport(let report)
                        where userID.map { key in
                            if case .key = sender, let bound = workerKeys[report.worker] {
                                return bound != key
                            }
                            return false
                        } ?? false:
                            refuse(
                                "refused.nameOfAnotherKey",
                                "a report as worker \(report.worker) from \(sender.description) refused: "
                                    + "that name reports with \(workerKeys[report.worker]!)")
                        case .workerReport(let report)
                        where Self.mayNotJoin(report.pool, sender: sender, security: security):
                            refuse(
                                "refused.pool",
                                "a report as worker \(report.worker) of pool \(report.pool) from \(sender.description) "
                                    + "refused: the key may not join that pool (its .pools file)")
                        case .workerReport(let report)
                        where core.livePeer(of: report.worker, now: elapsed.now).map {
                            $0 != peer && Self.reaches(router, $0)
                        } ?? false:
                            // Another connection under a live worker's name, while that worker is
                            // still connected: not a restart (a restarted worker's old connection is
                            // gone), so no lease and no sessions for it.
                            refuse(
                                "refused.nameTaken",
                                "a report as worker \(report.worker) refused: that worker is live on another connection"
                            )
                        case .workerReport(let report):
                            if case .key = sender, let userID, workerKeys[report.worker] == nil {
                                workerKeys[report.worker] = userID
                            }
                            counters["workerReports", default: 0] += 1
                            core.receive(report, from: peer, now: elapsed.now, into: &actions)
                        case .answer, .assignment, .lease:
                            throw ControlError.malformed(
                                "answers and assignments go from the coordinator, not to it")
                        }
                    } catch {
                        counters["malformed", default: 0] += 1
                        if counters["malformed"]! <= 10 || counters["malformed"]! % 1000 == 0 {
                            log.warning("a control message refused: \(error)")
                        }
                        if let id = Self.requestID(frames[1]) {
                            let outcome: ControlAnswer.Outcome = .invalid
                            counters["answers.invalid", default: 0] += 1
                            _ = try? router.trySend([
                                peer,
                                ControlMessage.answer(
                                    ControlAnswer(id: id, outcome: outcome, message: "\(error)")
                                )
                                .encoded(),
                            ])
                        }
                    }
                    perform()
                }
            }
            core.tick(now: elapsed.now, into: &actions)
            perform()
        }
        health.publish(counters: healthCounters(), via: publisher)
        log.info("stopped with \(core.plans.count) session(s) kept")
    }

    /// The `"id"` of a refused request, when it has a valid one to answer.
    static func requestID(_ bytes: [UInt8]) -> String? {
        guard let request = try? ControlMessage.requestID(in: bytes), ControlNames.isValid(request) else {
            return nil
        }
        return request
    }

    /// Whether `peer` is still connected to `router`: a grant for no report (number 0, which no
    /// worker sends, so a worker ignores it) is sent with `ZMQ_ROUTER_MANDATORY` on, which libzmq
    /// refuses for a peer it no longer knows (`EHOSTUNREACH`). A peer whose queue is full is
    /// still there.
    static func reaches(_ router: ZMQSocket, _ peer: [UInt8]) -> Bool {
        do throws(ZMQError) {
            try router.set(.routerMandatory, true)
            defer { try? router.set(.routerMandatory, false) }
            _ = try router.trySend([
                peer, ControlMessage.lease(LeaseGrant(report: 0, lease: .milliseconds(1))).encoded(),
            ])
            return true
        } catch {
            return false
        }
    }

    /// Whether a worker key's `.pools` file (beside its `.pub` in the allowed keys' `worker/`)
    /// leaves `pool` out. A key without the file, and a trusted peer, may join any pool.
    static func mayNotJoin(_ pool: String, sender: ControlPeer, security: BrokerSecurity) -> Bool {
        guard case .key(let role, let name) = sender, role == "worker",
            case .curve(_, let directory) = security,
            let pools = AllowedKeys.pools(ofWorker: name, in: directory)
        else { return false }
        return !pools.contains(pool)
    }
}
