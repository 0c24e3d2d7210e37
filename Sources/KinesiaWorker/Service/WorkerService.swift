import Foundation
public import KinesiaBus
public import KinesiaClient
public import KinesiaControl
import KinesiaJournal
import KinesiaMotion
public import KinesiaPublishJournal
public import KinesiaService
import KinesiaSystem
import KinesiaWire

/// The worker process (`kinesia worker`): hosts motion sessions on the poses of the bus and
/// publishes what they find.
///
/// The service is the socket loop only. It subscribes `pose/<camera>/` for each camera of its
/// sessions, hands every delivery to a ``WorkerCore`` (which hosts the sessions and makes every
/// decision: fan-out, events, snapshots, sender restarts, counters), performs the actions the
/// core returns (publish each event on `event/<camera>/<session>/` as the JSON line
/// `kinesia analyze --format json` prints, and the snapshot on `snapshot/<camera>/<session>/`;
/// log notices), and tells the core how each publish went. Its health report, about once a
/// second on `health/<name>/`, is ``WorkerCore/healthCounters(sequence:)``: poses, decode errors
/// (by reason), gaps, sender restarts, duplicates, rejected poses, events, snapshots and failed
/// publishes (by reason). On a graceful stop, analytics sessions publish their final set summaries.
///
/// With a journal (the default), each session's events and snapshots are journaled before they
/// are published and served through replay, the poses are analysed exactly once and in order
/// (``PoseFeed``), and the sessions are checkpointed, so that a restarted worker rebuilds from
/// its last checkpoint and publishes only what it had not.
///
/// ```swift
/// let service = WorkerService(configuration, log: log)
/// try await ServiceRunner(logger: log).run(BlockingService { stop in try service.run(until: stop) })
/// ```
public struct WorkerService: Sendable {
    /// What a worker is given to run.
    public struct Configuration: Sendable {
        /// The bus, the process name and whether the bus is insecure.
        public var process: BusProcessIdentity
        /// The sessions to host.
        public var sessions: [WorkerSession]
        /// Snapshots per second of pose time, at most.
        public var snapshotRate: Double
        /// The journal: the state directory, its limits and syncs (or none).
        public var journal: JournalOptions
        /// How long a hole in a camera's live poses is waited for before it is given up.
        public var holeWait: Duration
        /// The environment the state directory's default is found in.
        public var environment: [String: String]
        /// The plans of sessions the coordinator gave (a pool worker's): each session with a
        /// plan announces its run on `session/<camera>/<name>/` (`runStarted` when its stream
        /// is new, `runEnded` when the run ends).
        public var plans: [SessionPlan]
        /// A pool worker's lease and the epoch of the assignment the sessions run under (`nil`:
        /// a worker of `--session` flags, which holds its sessions for ever): nothing is
        /// published or journaled once the fence no longer holds (the service stops at once,
        /// ending no run), and a journal whose lock the holder of an older epoch still holds
        /// is taken from it (``PublishJournal/fencingEpoch``).
        public var fencing: (fence: SessionFence, epoch: UInt64)?
        /// Where the runs of ``plans`` go on, as the coordinator last heard it from the worker
        /// that ran them: a run this state directory knows less of (another box ran it) is
        /// rebuilt from its first pose on its stream (``RunResume``).
        public var resumes: [SessionKey: RunResume]

        /// A configuration.
        public init(
            process: BusProcessIdentity, sessions: [WorkerSession], snapshotRate: Double = 15,
            journal: JournalOptions, holeWait: Duration = .milliseconds(500),
            environment: [String: String], plans: [SessionPlan] = [],
            fencing: (fence: SessionFence, epoch: UInt64)? = nil, resumes: [SessionKey: RunResume] = [:]
        ) {
            self.resumes = resumes
            self.process = process
            self.sessions = sessions
            self.snapshotRate = snapshotRate
            self.journal = journal
            self.holeWait = holeWait
            self.environment = environment
            self.plans = plans
            self.fencing = fencing
        }
    }

    /// What it runs with.
    public let configuration: Configuration
    private let log: Logger
    /// The time of its decisions (a hole given up, a replay timed out, the checkpoints, the
    /// last poses drained at a stop), counted from the start of ``run(until:)``.
    private let startClock: @Sendable () -> ElapsedClock

    /// A worker that logs on `log` and times its decisions on `clock` (a ``ManualClock`` in
    /// tests).
    public init(_ configuration: Configuration, log: Logger, clock: some Clock<Duration> = ContinuousClock())
    {
        self.configuration = configuration
        self.log = log
        startClock = { ElapsedClock(clock) }
    }

    /// Runs the sessions until `stop` is requested, then finishes the poses already received
    /// (at most half a second), publishes the analytics sessions' final summaries and a last
    /// health report.
    ///
    /// - Parameters:
    ///   - ready: Called once the sessions are subscribed and their state restored, before the
    ///     first pose is read (a pool worker confirms a start then).
    ///   - progress: Told, about once a second, each session's clean and rejected reps (none
    ///     for an analytics session), by `camera/name`, when the sessions have plans (a pool
    ///     worker reports them).
    ///   - resumed: Told where each run of a session with a plan goes on (by `camera/name`),
    ///     before `ready` and at once whenever it changes (a first pose, a new pose stream, a
    ///     hole given up), so that a worker on another box can rebuild it; a run with more holes
    ///     than ``RunResume/maximumSkipped`` is left out.
    ///   - resumeKept: Waits at most the duration given until the coordinator has the resume
    ///     last told (whether it has): called after a run's first pose or a hole given up,
    ///     before what it causes is published, so that a worker of another box that takes the
    ///     run over knows of it.
    ///   - runEnd: Asked at the stop: why the runs of the sessions with a plan end (`nil`: they
    ///     do not, the worker only stops; a `runEnded` is published and their streams end
    ///     otherwise).
    ///   - context: The libzmq context to make its sockets in, shared with other services of
    ///     the process (a pool worker's sessions: one I/O thread for all, not one each); `nil`:
    ///     a context of its own, ended when it returns.
    /// - Throws: ``PublishJournalError`` and ``WorkerStateError`` when the state directory
    ///   cannot be used; the socket errors of a bus that cannot be reached.
    public func run(
        until stop: StopToken, ready: @Sendable () -> Void = {},
        progress: @Sendable ([String: (repCount: Int, rejectedCount: Int)]) -> Void = { _ in },
        resumed: @Sendable ([String: RunResume]) -> Void = { _ in },
        resumeKept: @Sendable (Duration) -> Bool = { _ in true },
        runEnd: @Sendable () -> RunRecord.RunEnd.Reason? = { nil }, context: ZMQContext? = nil
    ) throws {
        let zmq = try context ?? ZMQContext()
        defer { if context == nil { zmq.terminate() } }
        let specs = configuration.sessions
        let bus = configuration.process.bus
        // A pool session's first message (its run's start) goes out at once: the broker's
        // forwarded subscriptions are awaited before it (a PUB drops what comes before them).
        let publisher = try BusPublisher(
            context: zmq, bus: bus, linger: .seconds(1), connectionTimeout: .seconds(2),
            awaitsForwardedSubscriptions: !configuration.plans.isEmpty)
        defer { publisher.close() }
        // A pool worker's session sends its assignment's epoch with every event, snapshot and
        // run record: the broker refuses them once a newer holder published on the stream.
        publisher.epoch = configuration.fencing?.epoch
        // Each session's events and snapshots are journaled before they are published, on a
        // stream that survives restarts (a new one with --new-session); the journal is served
        // through replay, and poses are analysed exactly once and in order (PoseFeed): a
        // restarted worker replays its sessions' poses from their start and publishes only what
        // it had not.
        let plans = configuration.plans
        var state =
            try configuration.journal.disabled
            ? nil
            : Self.journal(
                specs, plans: plans, options: configuration.journal, bus: bus, publisher: publisher,
                environment: configuration.environment, fencing: configuration.fencing,
                resumes: configuration.resumes, log: log)
        let journal = state?.journal
        var core = try WorkerCore(
            sessions: specs, snapshotRate: configuration.snapshotRate,
            identities: state?.identities
                ?? specs.map { _ in WorkerCore.SessionIdentity(stream: publisher.streamID) },
            resume: state?.segments, beginningAtStreamStart: state?.beginningAtStreamStart ?? [],
            holeWait: configuration.holeWait)
        if let state { try Self.restoreCheckpoints(&core, state: state, publisher: publisher, log: log) }
        let subscriber = try BusSubscriber(
            context: zmq, bus: bus,
            prefixes: try core.cameras.map { (camera) throws(TopicError) in
                try TopicPrefix.poses(camera: camera)
            })
        defer { subscriber.close() }
        // Where the ingests serve their poses (health reports), on a subscriber of its own so
        // that other processes' restarts never count in the pose counters.
        let announcements = try state.map { _ in
            try BusSubscriber(context: zmq, bus: bus, prefixes: [.kind(.health)])
        }
        defer { announcements?.close() }
        // Read here, not in the closure below: a closure that captures the state would make
        // every access to it checked at run time (see perform()).
        let current = state?.current ?? [:]
        let replay: (source: JournalReplaySource, server: any ReplayServing)? =
            try journal.flatMap { journal in
                let source = JournalReplaySource(store: journal.store, current: current)
                source.beforeReading = { [unowned journal] topic, from in
                    journal.writePending(topic, from: from)
                }
                source.lastJournaled = { [unowned journal] topic, stream in
                    journal.lastJournaled(topic, stream: stream)
                }
                if let endpoint = try ReplayServer.endpoint(bus: bus, process: configuration.process.name) {
                    return (source, try ReplayServer(endpoint: endpoint))
                }
                guard bus.replayEndpoint != nil else {
                    log.warning(ReplayServer.notServedOnCURVE)
                    return nil
                }
                // A TCP bus with keys: through the broker's replay port, behind its CURVE and rights.
                let link = try BrokerReplayLink(context: zmq, bus: bus, problems: { log.warning($0) }) {
                    source.servedStreams.filter { Self.isAnnounced($0.topic) }
                }
                return (source, link)
            }
        defer { replay?.server.close() }
        let poseReplay = PoseReplayClient(context: zmq, bus: bus)
        defer { poseReplay.close() }
        // Where the poses were served in the last run: the rebuild asks there at once.
        // Its own temporary file per process and service (a pool worker runs one service per
        // session in one process).
        let hints = journal.map {
            ReplayEndpointHints(
                state: $0.stateDirectory, writer: "\(ProcessIdentity.id)-\(configuration.process.name)")
        }
        if let hints { poseReplay.remember(hints.load(), now: .zero) }
        var hintsFailed = false
        var health = try configuration.process.healthPublisher(role: "worker", problems: { log.warning($0) })
        if let replay {
            let endpoint = replay.server.endpoint
            // Event and snapshot streams are announced: a consumer that follows snapshots
            // exactly once (kinesia record) needs their endpoint and last sequence number too.
            health.replay = {
                ReplayAnnouncement(endpoint: endpoint, streams: Self.announced(replay.source.streams()))
            }
        }
        let elapsed = startClock()
        // A pool worker's lease: once it lapsed, nothing more is published, and nothing more is
        // kept in the state directory, which another holder may have now (checked on the
        // session's own clock: a worker resumed after a pause finds it closed, whatever its
        // control loop has read yet). A lapse is for good.
        let fence = configuration.fencing?.fence
        var fenced = false
        func holdsLease() -> Bool {
            if !fenced, let fence, !fence.holds { fenced = true }
            return !fenced
        }
        // Checkpoints: each camera's sessions about every `checkpointInterval`, one camera per
        // turn of the loop, the cameras spread over the interval (``CheckpointSchedule``); one
        // small file written and renamed by the journal's thread: no sync on the live loop.
        var checkpointTurn = 0
        var checkpoints = CheckpointSchedule(interval: Self.checkpointInterval)
        func checkpointIfDue() {
            // Called on every turn of the loop: the state (a value of a dozen references) is
            // read in place, not copied, until a checkpoint is due.
            guard state != nil, !core.cameras.isEmpty else { return }
            let index = checkpointTurn % core.cameras.count
            let camera = core.cameras[index]
            checkpointTurn &+= 1
            let now = elapsed.now
            guard
                checkpoints.isDue(
                    camera: camera, index: index, of: core.cameras.count, poses: core.poses, at: now),
                let checkpoint = core.checkpoint(camera: camera)
            else { return }
            checkpoints.taken(camera: camera, poses: core.poses, at: now)
            // Encoded and written after the journal records it counts on, by the journal's
            // thread (a kill loses neither: both are in the page cache, in that order); not
            // synced. The live loop only takes the state's values (about 2 µs a session): their
            // encoding takes 40-55 µs for an analyzer's and up to 1.5 ms for an analytics
            // session's, which no pose waits for.
            let files = state!.checkpoints
            let streams = state!.streams(camera)
            state!.journal.afterRecordsWritten(label: "checkpoint", of: state!.topics(camera)) {
                // Not after a lapse: the checkpoint would count records another holder lacks.
                guard fence?.holds ?? true else { return }
                let payload: [UInt8]
                do {
                    payload = try CheckpointCodec.encode(checkpoint)
                } catch {
                    throw WorkerStateError("cannot encode a checkpoint of \(camera): \(error)")
                }
                try files.save(payload, camera: camera, sessions: streams)
            } failure: { description in
                checkpointFailed(description)
            }
        }
        var checkpointErrors = 0
        func checkpointFailed(_ description: String) { countError(description, in: &checkpointErrors) }
        // The starts file's saves, syncs and appended holes that failed (a rebuild after a kill
        // may then start its sessions elsewhere than the live run did).
        var startsErrors = 0
        func startsFailed(_ description: String) { countError(description, in: &startsErrors) }
        func countError(_ description: String, in count: inout Int) {
            count += 1
            if count <= 10 || count % 1000 == 0 { log.error(description) }
        }
        // Reused for every delivery: a pose that publishes nothing allocates nothing.
        var actions: [WorkerCore.Action] = []
        actions.reserveCapacity(64)

        // Where each planned run goes on, told to the pool worker (its reports carry it).
        func tellResumes() {
            guard let state, !plans.isEmpty else { return }
            var resumes: [String: RunResume] = [:]
            for plan in plans {
                let camera = plan.key.camera
                guard let index = state.namesByCamera[camera]?.firstIndex(of: plan.key.name) else { continue }
                let history = state.history[camera] ?? []
                guard history.reduce(0, { $0 + $1.skipped.count }) <= RunResume.maximumSkipped else {
                    continue
                }
                resumes[plan.key.description] = RunResume(
                    stream: state.streams(camera)[index].rawValue,
                    segments: history.map {
                        RunResume.Segment(
                            stream: $0.stream.rawValue, first: $0.first, last: $0.last, skipped: $0.skipped)
                    })
            }
            resumed(resumes)
        }
        // A run's first pose, a new pose stream or a hole given up is told before what it
        // causes is published: at most `resumeWait`, then it goes on (live first).
        var resumesNotKept = 0
        func awaitResumeKept() {
            guard !plans.isEmpty, state != nil else { return }
            if !resumeKept(Self.resumeWait) {
                resumesNotKept += 1
                if resumesNotKept <= 10 || resumesNotKept % 1000 == 0 {
                    log.warning(
                        "the coordinator did not confirm the run's resume within \(Self.resumeWait): going on "
                            + "(a worker of another box taking the run over now would not know this change)")
                }
            }
        }
        // The loop's variables (the core, the actions, the state...) are checked for exclusive
        // access when compiled, not at run time, only as long as no local function that
        // captures them is handed to another function as a closure (the health report's
        // counters as `publishIfDue(counters:)` once did: the core and the state boxed, 90
        // checks instead of 17, dozens a pose; a worker built with the checks off used 5-10 %
        // less processor). So deliveries are received as values (`receive()`), not through a
        // callback. scripts/check-exclusivity (run by scripts/test) fails when one comes back.
        func perform() {
            performActions()
            // Requests no server can answer fail at once, here, not at the next turn: a burst
            // of holes is one failure after another (the replies of the requests an answer's
            // actions make are appended, and answered in turn).
            guard !immediateReplies.isEmpty else { return }
            var next = 0
            while next < immediateReplies.count {
                apply(immediateReplies[next])
                next += 1
                performActions()
            }
            immediateReplies.removeAll(keepingCapacity: true)
        }
        var immediateReplies: [PoseReplayClient.Reply] = []

        func performActions() {
            for action in actions {
                switch action {
                case .publish(let publication):
                    core.published(publication, outcome: send(publication))
                case .notice(let notice) where notice.isWarning:
                    log.warning(notice.description)
                case .notice(let notice):
                    log.notice(notice.description)
                case .record(let camera, let segments):
                    // Before anything the pose causes is published; where the run began is
                    // kept however a checkpoint prunes the segments, and so is every segment
                    // since (a worker on another box rebuilds the run from them).
                    guard state != nil, holdsLease() else { break }
                    if state!.origins[camera] == nil, let first = segments.first {
                        state!.origins[camera] = (first.stream, first.first)
                    }
                    let history = PoseSegment.history(state!.history[camera] ?? [], extendedBy: segments)
                    state!.history[camera] = history
                    // Written now (a kill keeps it: it is in the page cache before anything the
                    // pose causes is published); forced to the device by the journal's thread
                    // before it writes the records of what the pose causes, so a power cut
                    // never keeps those without it, and no flush holds the live loop.
                    let starts = state!.starts
                    let directory = starts.directory
                    let streams = state!.streams(camera)
                    do {
                        try starts.save(
                            camera: camera, sessions: streams, segments: history,
                            origin: state!.origins[camera], synced: false)
                        state!.journal.afterRecordsWritten(label: "starts", of: state!.topics(camera)) {
                            try SessionStarts.sync(in: directory, camera: camera, sessions: streams)
                        } failure: { description in
                            startsFailed(description)
                        }
                    } catch {
                        startsFailed(error.description)
                    }
                    tellResumes()
                    awaitResumeKept()
                case .recordSkip(let camera, let stream, let sequences):
                    // Before what the poses after the hole cause is published: a rebuild gives
                    // the hole up too.
                    guard holdsLease() else { break }
                    do {
                        // Forced to the device by the journal's thread, ahead of the records of
                        // what the poses after the hole cause; one job for the holes of a batch.
                        if let state,
                            try state.starts.appendSkip(
                                camera: camera, sessions: state.streams(camera), stream: stream,
                                sequences: sequences)
                        {
                            let skips = state.starts.unsyncedSkips
                            state.journal.afterRecordsWritten(label: "skips", of: state.topics(camera)) {
                                try skips.flush()
                            } failure: { description in
                                startsFailed(description)
                            }
                        }
                    } catch {
                        startsFailed(error.description)
                    }
                    if let index = state?.history[camera]?.lastIndex(where: { $0.stream == stream }) {
                        state?.history[camera]?[index].addSkipped(sequences)
                    }
                    tellResumes()
                    awaitResumeKept()
                case .newRun(let camera, let session, let stream):
                    // Before anything the new run publishes: its streams are journaled anew.
                    guard state != nil, holdsLease(),
                        let spec = specs.first(where: { $0.camera == camera && $0.name == session })
                    else { break }
                    do {
                        let topics = [
                            try Topic.event(camera: camera, session: session),
                            try Topic.snapshot(camera: camera, session: session),
                        ]
                        try state!.journal.attach(
                            topics, identity: "session+\(camera)+\(session)", session: spec.identity,
                            newStream: stream, to: publisher)
                        for topic in topics { replay?.source.setCurrent(stream, for: topic) }
                        state!.setStream(stream, camera: camera, session: session)
                        state!.history[camera] = []
                        log.error("session \(camera)/\(session): new run on stream \(stream)")
                    } catch {
                        log.error("session \(camera)/\(session): cannot journal its new run: \(error)")
                    }
                case .requestPoses(let camera, let request, let id):
                    if let failure = poseReplay.send(camera: camera, request, id: id, now: elapsed.now) {
                        immediateReplies.append(failure)
                    }
                }
            }
        }

        func apply(_ reply: PoseReplayClient.Reply) {
            switch reply {
            case .pose(let camera, let stream, let sequence, let pose):
                core.receiveReplayed(
                    pose, camera: camera, stream: stream, sequence: sequence, now: elapsed.now, into: &actions
                )
            case .ended(let camera, let end):
                core.replayEnded(camera: camera, end: end, now: elapsed.now, into: &actions)
            case .failed(let camera, let id, let stream, let first):
                core.replayFailed(
                    camera: camera, requestID: id, stream: stream, first: first, now: elapsed.now,
                    into: &actions)
            case .timedOut(let camera):
                core.replayTimedOut(camera: camera, now: elapsed.now, into: &actions)
            }
        }

        func handle(_ delivery: BusSubscriber.Delivery) {
            switch delivery {
            case .malformed(let topic, let reason):
                core.receiveMalformed(topic: topic, reason: reason, into: &actions)
            case .message(let message, _):
                // Health reports: where the ingests serve their poses, and how far they published.
                guard case .health(let report) = message.body, let announcement = report.replay else {
                    return
                }
                let now = elapsed.now
                if poseReplay.announced(announcement, now: now), let hints {
                    do {
                        try hints.save(poseReplay.announcedEndpoints)
                    } catch {
                        if !hintsFailed { log.warning("\(error)") }
                        hintsFailed = true
                    }
                }
                core.announced(announcement, now: now, into: &actions)
            case .flatPose(let topic, let header, let pose, let result):
                handlePose(topic, header, pose, result)
                return
            }
            perform()
        }

        func handlePose(
            _ topic: Topic, _ header: WireHeader, _ pose: borrowing FlatPose, _ result: SequenceResult
        ) {
            if state != nil {
                core.receiveLive(pose, on: topic, header: header, now: elapsed.now, into: &actions)
            } else {
                core.receive(pose, on: topic, header: header, sequence: result, into: &actions)
            }
            perform()
        }

        // Each pose is decoded here, in place, and analysed by every session of its camera.
        var pose = FlatPose()
        /// Receives and handles one delivery, if one is waiting (`false` otherwise).
        func receive() throws(ZMQError) -> Bool {
            switch try subscriber.tryReceive(flatPoseInto: &pose) {
            case nil: return false
            case .pose(let topic, let header, let result)?: handlePose(topic, header, pose, result)
            case .other(let delivery)?: handle(delivery)
            }
            return true
        }

        func handleReplies() {
            for reply in poseReplay.receive(now: elapsed.now) {
                apply(reply)
                perform()
            }
        }

        func send(_ publication: WorkerCore.Publication) -> WorkerCore.PublishOutcome {
            guard holdsLease() else { return .failed(reason: "fenced") }
            do throws(BusPublishError) {
                let queued = try publisher.publish(
                    json: publication.bytes, kind: publication.kind, on: publication.topic)
                if state != nil, let sent = publisher.lastHeader?.sequence, sent != publication.sequence {
                    log.error(
                        "\(publication.topic): published as #\(sent), "
                            + "the analysis numbered it #\(publication.sequence)")
                }
                return queued ? .sent : .notQueued
            } catch {
                switch error {
                case .message(let error): return .failed(reason: error.code)
                case .socket: return .failed(reason: "socket")
                }
            }
        }

        // The loop's wait (its sockets added below); read by the health counters.
        var waits = ZMQWaitSet()
        func counters() -> [String: Int] {
            var values = core.healthCounters(sequence: subscriber.tracker.totals)
            values["catchingUp"] = core.isCatchingUp ? 1 : 0
            if state != nil {
                values["checkpoints"] = state!.journal.completedJobs("checkpoint")
                values["checkpointErrors"] = checkpointErrors
                values["startsErrors"] = startsErrors
                values["holeFlushes"] = state!.journal.completedJobs("skips")
            }
            if !plans.isEmpty, state != nil { values["resumesNotKept"] = resumesNotKept }
            // Messages a wake-up did not announce, found by the look after a timed-out wait.
            values["wakeUpsMissed"] = waits.foundOnTimeout
            if let journal { values.merge(journal.healthCounters) { own, _ in own } }
            if let replay {
                values.merge(replay.server.counters) { own, _ in own }
                // What the replay's readers found damaged in the segments they read.
                for (name, count) in replay.source.damageFound.counters where count > 0 {
                    values[name, default: 0] += count
                }
            }
            return values
        }

        log.info(
            "hosting "
                + specs.map { "\($0.camera)/\($0.name)=\($0.analysisText)" }
                .joined(separator: ", ") + " on \(bus)")
        core.start(now: elapsed.now, into: &actions)
        perform()
        func announce(_ record: RunRecord) {
            guard holdsLease() else { return }
            guard let topic = try? Topic.session(camera: record.key.camera, session: record.key.name) else {
                return
            }
            do {
                _ = try publisher.publish(json: record.json(), kind: .session, on: topic)
                log.info("\(topic): \(record.description)")
            } catch {
                log.error("\(topic): cannot announce \(record.description): \(error)")
            }
        }
        // A run whose stream is new is announced (a resumed run was, before the restart).
        for plan in plans where state.map({ !$0.resumedRuns.contains(plan.key) }) ?? true {
            announce(.started(plan))
            if let reps = plan.baselineReps {
                announce(.baselineStarted(run: plan.run, key: plan.key, reps: reps))
            }
        }
        tellResumes()
        // One poll(2) a wake-up, not zmq_poll's two and its two looks at every socket (28
        // system calls a wake-up for 3 sockets, and a loop at a camera's pace wakes for each
        // pose): see ZMQWaitSet. The pose replay clients' sockets come and go (removed from
        // the set and added again when they change) and are always looked at (their requests are sent from anywhere).
        let subscriberItem = try waits.add(subscriber.socket)
        let replayItem = try replay.map { replay throws(ZMQError) in try waits.add(replay.server.socket) }
        let announcementsItem = try announcements.map { announcements throws(ZMQError) in
            try waits.add(announcements.socket)
        }
        let baseCount = waits.count
        var waitedDealers: [ObjectIdentifier] = []
        var dealerItems: Range<Int> = waits.count..<waits.count
        ready()
        while !stop.isRequested, holdsLease() {
            // Not publishIfDue(counters:): a function handed over as a closure would make every
            // variable it captures checked at run time (see perform()).
            if health.isDue {
                health.publish(counters: counters(), via: publisher)
                // A pool worker's session tells its counts (a worker of --session flags has no
                // one to tell: nothing is computed).
                if !plans.isEmpty {
                    var counts: [String: (repCount: Int, rejectedCount: Int)] = [:]
                    for spec in specs {
                        guard let snapshot = core.snapshot(camera: spec.camera, session: spec.name) else {
                            continue
                        }
                        counts["\(spec.camera)/\(spec.name)"] = (snapshot.repCount, snapshot.rejectedCount)
                    }
                    progress(counts)
                }
            }
            journal?.writeAndSyncIfDue(now: elapsed.now)
            checkpointIfDue()
            let dealers = poseReplay.sockets
            if dealers.count != waitedDealers.count
                || !zip(dealers, waitedDealers).allSatisfy({ ObjectIdentifier($0) == $1 })
            {
                waits.removeSockets(from: baseCount)
                for dealer in dealers { try waits.add(dealer) }
                waitedDealers = dealers.map { ObjectIdentifier($0) }
                dealerItems = baseCount..<waits.count
            }
            for item in dealerItems { waits.touched(item) }
            // Never later than the end of the wait for a hole in the live poses.
            var timeout = Duration.milliseconds(100)
            if let deadline = core.deadline {
                timeout = max(.zero, min(timeout, deadline - (elapsed.now)))
            }
            let ready = try waits.wait(timeout: timeout)
            guard holdsLease() else { break }
            core.tick(now: elapsed.now, into: &actions)
            perform()
            // Only the sockets found readable are read (each look at a socket is two system
            // calls, on the way of the next live pose); the replay server also when it answers
            // clients (their idle time expires).
            if let replay, let replayItem,
                ready.contains(replayItem) || replay.server.hasWorkWithoutRequests
            {
                try replay.server.serve(from: replay.source)
                waits.touched(replayItem)
            }
            if let announcementsItem, ready.contains(announcementsItem) {
                while let announcements, let next = try announcements.tryReceive() { handle(next) }
                waits.readToEnd(announcementsItem)
            }
            if dealerItems.contains(where: { ready.contains($0) }) { handleReplies() }
            // Drain what is already there before looking at the clock again.
            if ready.contains(subscriberItem) {
                var burst = 0
                while burst < 10_000 {
                    guard try receive() else {
                        waits.readToEnd(subscriberItem)
                        break
                    }
                    burst += 1
                }
            }
            core.tick(now: elapsed.now, into: &actions)
            perform()
        }
        // A stop asked for after the lease lapsed (the pool worker's loop, resumed from a pause,
        // may ask before this thread looked) is a lapse too: nothing of the graceful stop may
        // touch what another holder now has.
        if !holdsLease() {
            // Its worker's lease lapsed: the coordinator may have given the sessions to another
            // worker, which rebuilds them from the journal and checkpoints. Nothing more is
            // published, no run ends; what was journaled before stays.
            log.warning(
                "sessions \(specs.map { "\($0.camera)/\($0.name)" }.joined(separator: ", ")) stopped: "
                    + "their worker's lease lapsed (fenced), nothing more is published")
            journal?.abandon()
            return
        }
        // Graceful: finish the poses already received (at most half a second), then report.
        let deadline = elapsed.now + .milliseconds(500)
        while elapsed.now < deadline, try receive() {}
        // Analytics sessions end their set: the final summaries go out before the report.
        core.finish(into: &actions)
        for case .publish(let publication) in actions {
            core.published(publication, outcome: send(publication))
        }
        // The runs end when the coordinator ended them (a stop, a reset), not when the worker
        // only stops (its sessions resume their runs elsewhere or after its restart).
        let ending = plans.isEmpty ? nil : runEnd()
        if let ending {
            for plan in plans {
                let snapshot = core.snapshot(camera: plan.key.camera, session: plan.key.name)
                var end = RunRecord.RunEnd(
                    run: plan.run, key: plan.key, reason: ending, repCount: snapshot?.repCount ?? 0,
                    rejectedCount: snapshot?.rejectedCount ?? 0, best: snapshot?.best ?? 0)
                if let state { Self.summarize(&end, state: state, log: log) }
                // Where the run began and ended in its camera's poses.
                if let origin = state?.origins[plan.key.camera] {
                    end.firstPose = RunRecord.PosePosition(stream: origin.stream, sequence: origin.sequence)
                }
                if let position = core.position(camera: plan.key.camera), position.next > 0 {
                    end.lastPose = RunRecord.PosePosition(
                        stream: position.stream, sequence: position.next - 1)
                }
                announce(.ended(end))
            }
        }
        journal?.finish(ended: ending != nil)
        health.publish(counters: counters(), via: publisher)
        let totals = subscriber.tracker.totals
        // Made first: the log's autoclosure must not capture the core (see perform()).
        let stopped =
            "stopped: \(core.poses) poses, \(core.events) events, \(core.snapshots) snapshots, "
            + "\(totals.missing) missing, \(core.decodeErrorCount) decode errors, "
            + "\(core.publishFailureCount) failed publishes"
        log.info(stopped)
    }

    /// The streams a worker announces (on `health/`, and to the broker's replay port): its
    /// events, snapshots and run records, not the poses it journals for its own rebuild.
    static func announced(_ streams: [ReplayStreamInfo]) -> [ReplayStreamInfo] {
        streams.filter { isAnnounced($0.topic) }
    }

    /// Whether a worker announces the streams of `topic`: an event, snapshot or run topic.
    static func isAnnounced(_ topic: Topic) -> Bool {
        topic.kind == .event || topic.kind == .snapshot || topic.kind == .session
    }

    /// Adds to a run's end its reps, faults and baseline, read from the events the run published
    /// (its event journal, from its first event: a worker restarted during the run, from a
    /// checkpoint or not, tells the whole run). A run that journaled no event has none; nothing is
    /// added when the journal cannot be read.
    private static func summarize(_ end: inout RunRecord.RunEnd, state: State, log: Logger) {
        guard let topic = try? Topic.event(camera: end.key.camera, session: end.key.name),
            let stream = state.current[topic]
        else { return }
        // What the journal's thread has not written yet is written first.
        if let last = state.journal.lastJournaled(topic, stream: stream) {
            state.journal.writePending(topic, from: last)
        }
        do {
            let reader = try state.journal.store.openReader(
                for: JournalStream(topic: topic, streamID: stream))
            var reps: [Rep] = []
            var faults: [FormFeedback: Int] = [:]
            var baseline: Double?
            for entry in try reader.allEntries() where entry.frames.count == 2 {
                guard let message = try? WireMessage.decode(topic: entry.frames[0], payload: entry.frames[1]),
                    case .event(let json) = message.body, let (_, event) = try? MotionJSON.decodeEvent(json)
                else { continue }
                switch event {
                case .repCompleted(let rep), .repRejected(let rep): reps.append(rep)
                case .formFault(let fault): faults[fault, default: 0] += 1
                case .baselineCompleted(let value): baseline = value
                default: break
                }
            }
            end.reps = reps
            end.faults = faults
            end.baseline = baseline
        } catch .notAJournal {
            // No segment: the run journaled no event (stopped or reset before its first).
            end.reps = []
            end.faults = [:]
        } catch {
            log.warning("\(topic): the run's reps cannot be read from its journal: \(error)")
        }
    }

    /// The longest a pool session waits, after a run's first pose or a hole given up, for the
    /// coordinator to have the run's resume before it publishes what follows: a report's round
    /// trip (the pool worker reports at once), with room for a loaded machine. Past it, the
    /// session goes on.
    public static let resumeWait: Duration = .milliseconds(250)

    /// How often each camera's sessions are checkpointed, about: a restarted worker replays at
    /// most this much of the camera's poses (plus the time it was down).
    public static let checkpointInterval: Duration = .seconds(2)

    /// Restores each resumed camera from its newest checkpoint that reads back and fits (an
    /// older one when the newest does not), so that the rebuild starts there, not at the
    /// camera's first pose; then numbers the sessions' topics on from the checkpoint when the
    /// journal ends before it (records a full disk or a torn tail lost).
    private static func restoreCheckpoints(
        _ core: inout WorkerCore, state: State, publisher: BusPublisher, log: Logger
    ) throws {
        for camera in core.cameras
        where state.segments[camera].map({ !$0.isEmpty }) ?? false
            && !state.rebuiltFromFirstPose.contains(camera)
        {
            let found = state.checkpoints.newest(camera: camera, sessions: state.streams(camera)) {
                payload -> WorkerCore.CameraCheckpoint? in
                guard
                    let checkpoint = try? CheckpointCodec.decode(
                        WorkerCore.CameraCheckpoint.self, from: payload)
                else { return nil }
                var trial = core
                guard (try? trial.restore(checkpoint)) != nil else { return nil }
                core = trial
                return checkpoint
            }
            if found.passedOver > 0 {
                log.warning(
                    "\(camera): \(found.passedOver) checkpoint(s) did not read back or fit: passed over")
            }
            guard let checkpoint = found.value else {
                log.info("\(camera): no checkpoint: the sessions are rebuilt from their first pose")
                continue
            }
            log.info(
                "\(camera): restored from a checkpoint at \(checkpoint.segments[0].description): rebuilding from there"
            )
            for session in checkpoint.sessions {
                for (topic, next) in [
                    (try Topic.event(camera: camera, session: session.name), session.nextEvent),
                    (try Topic.snapshot(camera: camera, session: session.name), session.nextSnapshot),
                ] where next > 0 && (publisher.lastSequence(on: topic).map { $0 < next - 1 } ?? true) {
                    publisher.continueStream(session.stream, on: topic, after: next - 1)
                }
            }
        }
    }

    /// What the state directory gives a worker: the journal, each session's identity and last
    /// journaled sequence numbers, and each camera's recorded session starts.
    private struct State {
        var journal: PublishJournal
        var checkpoints: CheckpointFiles
        var identities: [WorkerCore.SessionIdentity]
        var segments: [String: [PoseSegment]]
        var starts: SessionStarts
        var current: [Topic: StreamID]
        var streamsByCamera: [String: [StreamID]]
        /// The journaled topics of each camera's sessions (events, snapshots, runs).
        var topicsByCamera: [String: [Topic]]
        /// The session names of each camera, in the order of `streamsByCamera`.
        var namesByCamera: [String: [String]]
        /// The sessions with a plan whose run's stream was resumed (its start was announced).
        var resumedRuns: Set<SessionKey>
        /// Each camera's first pose analysed by its sessions (where their runs began).
        var origins: [String: (stream: StreamID, sequence: UInt64)] = [:]
        /// Each camera's segments from its sessions' first pose, with every hole given up
        /// (what the starts file keeps, and a worker on another box rebuilds from).
        var history: [String: [PoseSegment]] = [:]
        /// The cameras whose runs another worker's resume rebuilds from their first pose: their
        /// checkpoints here know less than it, and are not restored.
        var rebuiltFromFirstPose: Set<String> = []
        /// The cameras whose runs began before their camera published
        /// (``SessionPlan/beginsAtStreamStart``) and of which no first pose is known, here or in
        /// the coordinator's resume: they begin at the first pose of the camera's stream,
        /// replayed from its ingest's journal, not at the first pose received live.
        var beginningAtStreamStart: Set<String> = []

        func streams(_ camera: String) -> [StreamID] { streamsByCamera[camera] ?? [] }

        /// What a job about `camera` (a checkpoint, its starts) counts on being written first.
        func topics(_ camera: String) -> [Topic] { topicsByCamera[camera] ?? [] }

        /// A new run: `session` of `camera` publishes on `stream` from now on.
        mutating func setStream(_ stream: StreamID, camera: String, session: String) {
            guard let index = namesByCamera[camera]?.firstIndex(of: session) else { return }
            streamsByCamera[camera]?[index] = stream
        }
    }

    /// Opens the state directory and attaches each session's event and snapshot topics to its
    /// stream identity (`session+<camera>+<name>`): resumed when the session is the same
    /// exercise and side (and thresholds), new otherwise.
    private static func journal(
        _ specs: [WorkerSession], plans: [SessionPlan], options: JournalOptions, bus: BusAddress,
        publisher: BusPublisher, environment: [String: String],
        fencing: (fence: SessionFence, epoch: UInt64)?,
        resumes: [SessionKey: RunResume], log: Logger
    ) throws -> State {
        let journal = try PublishJournal(
            options: options, environment: environment, bus: bus.description, log: log)
        journal.fencingEpoch = fencing?.epoch
        // Once the worker's lease lapsed, a failing writer ends no stream: another holder may
        // have taken them.
        if let fence = fencing?.fence { journal.holdsStreams = { fence.holds } }
        // A worker publishes the same events again after a kill -9 (the rebuild regenerates
        // them, same numbers, same bytes): its journal writes in batches.
        journal.writesBehind = true
        var identities: [WorkerCore.SessionIdentity] = []
        var current: [Topic: StreamID] = [:]
        var streamsByCamera: [String: [StreamID]] = [:]
        var topicsByCamera: [String: [Topic]] = [:]
        var namesByCamera: [String: [String]] = [:]
        var resumedByCamera: [String: Bool] = [:]
        var resumedRuns: Set<SessionKey> = []
        // The runs given with a resume whose stream this worker publishes on (resumed here, or
        // taken from the resume).
        var givenByCamera: [String: RunResume] = [:]
        for spec in specs {
            let event = try Topic.event(camera: spec.camera, session: spec.name)
            let snapshot = try Topic.snapshot(camera: spec.camera, session: spec.name)
            // A session with a plan announces its run on its own stream's session topic.
            let key = plans.first { $0.key.camera == spec.camera && $0.key.name == spec.name }?.key
            let runs = key == nil ? [] : [try Topic.session(camera: spec.camera, session: spec.name)]
            let given = key.flatMap { resumes[$0] }
            let attached = try journal.attach(
                [event, snapshot] + runs, identity: "session+\(spec.camera)+\(spec.name)",
                session: spec.identity, continuing: given.map { StreamID($0.stream) }, to: publisher)
            if let key, attached.resumed { resumedRuns.insert(key) }
            if let given, attached.stream.rawValue == given.stream { givenByCamera[spec.camera] = given }
            let last = attached.lastSequences[event].map { "after event #\($0)" } ?? "with no event yet"
            log.info(
                attached.resumed
                    ? "session \(spec.camera)/\(spec.name): resuming stream \(attached.stream) \(last)"
                    : "session \(spec.camera)/\(spec.name): new stream \(attached.stream)")
            identities.append(
                WorkerCore.SessionIdentity(
                    stream: attached.stream,
                    lastEvent: attached.resumed ? attached.lastSequences[event] ?? nil : nil,
                    lastSnapshot: attached.resumed ? attached.lastSequences[snapshot] ?? nil : nil))
            current[event] = attached.stream
            current[snapshot] = attached.stream
            // A run's records are served and announced like its events (kinesia record, or a
            // listener, started late gets them exactly once).
            for topic in runs { current[topic] = attached.stream }
            streamsByCamera[spec.camera, default: []].append(attached.stream)
            topicsByCamera[spec.camera, default: []] += [event, snapshot] + runs
            namesByCamera[spec.camera, default: []].append(spec.name)
            resumedByCamera[spec.camera] = (resumedByCamera[spec.camera] ?? true) && attached.resumed
        }
        journal.install(on: publisher)
        let starts = try SessionStarts(state: journal.stateDirectory)
        var segments: [String: [PoseSegment]] = [:]
        var origins: [String: (stream: StreamID, sequence: UInt64)] = [:]
        for (camera, streams) in streamsByCamera where resumedByCamera[camera] == true {
            let loaded = try starts.loadWithOrigin(camera: camera, sessions: streams)
            segments[camera] = loaded.segments
            origins[camera] = loaded.origin
            if let recorded = segments[camera], !recorded.isEmpty {
                log.info(
                    "\(camera): replaying the sessions' poses from \(recorded.map(\.description).joined(separator: ", "))"
                )
            }
        }
        // A run another worker went on with: rebuilt from its first pose as that worker told
        // it, unless this state directory knows as much (the same box: its checkpoints then).
        var rebuilt: Set<String> = []
        for (camera, given) in givenByCamera {
            let local = RunResume(
                stream: given.stream,
                segments: (segments[camera] ?? []).map {
                    RunResume.Segment(
                        stream: $0.stream.rawValue, first: $0.first, last: $0.last, skipped: $0.skipped)
                })
            if resumedByCamera[camera] == true, local.covers(given) { continue }
            let taken = given.segments.map {
                PoseSegment(stream: StreamID($0.stream), first: $0.first, last: $0.last, skipped: $0.skipped)
            }
            segments[camera] = taken
            origins[camera] = taken.first.map { ($0.stream, $0.first) }
            rebuilt.insert(camera)
            if !taken.isEmpty {
                try starts.save(
                    camera: camera, sessions: streamsByCamera[camera] ?? [], segments: taken,
                    origin: origins[camera])
            }
            log.info(
                "\(camera): the run goes on from another worker on stream \(StreamID(given.stream)): "
                    + (taken.isEmpty
                        ? "no pose analysed yet"
                        : "rebuilt from its first pose, \(taken.map(\.description).joined(separator: ", "))"))
        }
        log.info("journaling in \(journal.stateDirectory) (fsync \(options.fsync))")
        var state = State(
            journal: journal, checkpoints: try CheckpointFiles(state: journal.stateDirectory),
            identities: identities,
            segments: segments, starts: starts, current: current,
            streamsByCamera: streamsByCamera, topicsByCamera: topicsByCamera, namesByCamera: namesByCamera,
            resumedRuns: resumedRuns,
            origins: origins)
        state.history = segments
        state.rebuiltFromFirstPose = rebuilt
        for plan in plans where plan.beginsAtStreamStart && (segments[plan.key.camera] ?? []).isEmpty {
            state.beginningAtStreamStart.insert(plan.key.camera)
            log.info(
                "\(plan.key): no first pose known yet, and its run began before \(plan.key.camera) published: "
                    + "it begins at the first pose of the camera's stream")
        }
        return state
    }
}
