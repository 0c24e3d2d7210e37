import Foundation
import KinesiaBus
public import KinesiaClient
import KinesiaJournal
import KinesiaMotion
public import KinesiaPublishJournal
public import KinesiaService
import KinesiaSystem
public import KinesiaWire

/// The camera-ingest process (`kinesia ingest`): publishes a source's poses on
/// `pose/<camera>/`, journals them (unless told not to) and serves the journal through replay,
/// announced on `health/<name>/` with its counters.
///
/// At `--pace recording` a recording goes out at the pace of its timestamps, and a pose that
/// meets a full queue is dropped and counted (the receivers see the gap); at `max`, and from a
/// live source, the ingest waits for the queue instead. A recording or simulation whose stream
/// is resumed goes on after the last pose journaled.
///
/// ```swift
/// let service = IngestService(configuration, source: try PoseSource.open("sim:squat", ...), log: log)
/// try await ServiceRunner(logger: log).run(BlockingService { stop in try service.run(until: stop) })
/// ```
public struct IngestService: Sendable {
    /// How fast poses go out.
    public enum Pace: String, CaseIterable, Sendable {
        /// At the pace of the poses' timestamps.
        case recording
        /// As fast as the bus takes them.
        case max
    }

    /// What an ingest is given to run.
    public struct Configuration: Sendable {
        /// The bus, the process name and whether the bus is insecure.
        public var process: BusProcessIdentity
        /// The topic: `pose/<camera>/`.
        public var topic: Topic
        /// How fast poses go out.
        public var pace: Pace
        /// At ``Pace/recording``: this many times the recording's pace.
        public var speed: Double
        /// How long to wait for a first subscriber before sending anyway (0: do not wait).
        public var waitSeconds: Double
        /// The source as given (`sim:squat`, a path, `-`), for the logs and the stream identity.
        public var source: String
        /// Whether the source loops (part of the stream identity).
        public var loop: Bool
        /// The journal: the state directory, its limits and syncs (or none).
        public var journal: JournalOptions
        /// After the source's end, serve its poses through replay until stopped.
        public var keepServing: Bool
        /// The environment the state directory's default is found in.
        public var environment: [String: String]

        /// A configuration.
        public init(
            process: BusProcessIdentity, topic: Topic, pace: Pace = .recording, speed: Double = 1,
            waitSeconds: Double = 30, source: String, loop: Bool = false, journal: JournalOptions,
            keepServing: Bool = false, environment: [String: String]
        ) {
            self.process = process
            self.topic = topic
            self.pace = pace
            self.speed = speed
            self.waitSeconds = waitSeconds
            self.source = source
            self.loop = loop
            self.journal = journal
            self.keepServing = keepServing
            self.environment = environment
        }
    }

    /// What it runs with.
    public let configuration: Configuration
    private let source: UncheckedSource
    private let log: Logger
    /// The pace's time and the progress reports', counted from the start of ``run(until:)``.
    private let startClock: @Sendable () -> ElapsedClock

    /// An ingest of `source` (used on the thread that runs the service only), logging on `log`,
    /// pacing and waiting for a subscriber on `clock` (a ``ManualClock`` in tests).
    public init(
        _ configuration: Configuration, source: PoseSource, log: Logger,
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.configuration = configuration
        self.source = UncheckedSource(value: source)
        self.log = log
        startClock = { ElapsedClock(clock) }
    }

    /// Moves the source onto the loop's thread (it is used there only).
    private struct UncheckedSource: @unchecked Sendable {
        var value: PoseSource
    }

    private struct Counters {
        var sent = 0
        var dropped = 0
        var paused = 0
        var malformedLines = 0
        var invalid = 0
        /// Jumps of the recording's time not waited for at `--pace recording`.
        var timeJumps = 0
        /// The pose detector's counters (`video:` and `camera:` sources).
        var detector: [String: Int] = [:]
        /// A camera's poses analysed while the ingest waited for a subscriber, not sent.
        var discarded = 0
        /// Poses a resumed stream had sent before the restart, not sent again.
        var resumedSkipped = 0

        var dictionary: [String: Int] {
            [
                "sent": sent, "dropped": dropped, "paused": paused, "malformedLines": malformedLines,
                "invalid": invalid, "timeJumps": timeJumps,
            ].merging(detector) { own, _ in own }.merging(discarded > 0 ? ["discarded": discarded] : [:]) {
                own, _ in own
            }.merging(resumedSkipped > 0 ? ["resumedSkipped": resumedSkipped] : [:]) { own, _ in own }
        }
    }

    /// Publishes the source until its end (or, with ``Configuration/keepServing``, until `stop`)
    /// or until `stop` is requested, then sends a last health report and logs a summary.
    ///
    /// - Throws: ``IngestServiceError/source(_:)`` when the source failed or held no usable pose;
    ///   ``IngestServiceError/journal(_:)`` when the state directory cannot be used;
    ///   ``IngestServiceError/bus(_:_:)`` when the bus cannot be reached;
    ///   ``IngestServiceError/replay(_:_:)`` when the journal's replay cannot be served.
    public func run(until stop: StopToken) throws(IngestServiceError) {
        let settings = configuration
        let bus = settings.process.bus
        let log = self.log
        let zmq = try onBus { () throws(ZMQError) in try ZMQContext() }
        defer { zmq.terminate() }
        let publisher = try onBus { () throws(ZMQError) in
            try BusPublisher(context: zmq, bus: bus, waitsForSubscribers: true, linger: .seconds(2))
        }
        defer { publisher.close() }
        var health = try IngestServiceError.catching(IngestServiceError.processName) {
            () throws(TopicError) in
            try settings.process.healthPublisher(role: "ingest", problems: { log.warning($0) })
        }
        var counters = Counters()
        let topic = settings.topic
        var source = self.source.value
        let (journal, resumeAfter) = try IngestServiceError.catching(IngestServiceError.journal) {
            () throws(PublishJournalError) in
            try Self.journal(settings, source: source, publisher: publisher, log: log)
        }
        // The pose journal is served through replay (workers fill gaps and replay a session's
        // poses from it after a restart), announced on health/.
        var served: (source: JournalReplaySource, server: any ReplayServing)?
        if let journal {
            let endpoint = try IngestServiceError.catching(IngestServiceError.replayEndpoint) {
                () throws(BusAddressError) in
                try ReplayServer.endpoint(bus: bus, process: settings.process.name)
            }
            let source = JournalReplaySource(
                store: journal.store, current: [topic: publisher.streamID(on: topic)])
            if let endpoint {
                served = (
                    source,
                    try IngestServiceError.catching({ (error: ZMQError) in .replay(endpoint, error) }) {
                        () throws(ZMQError) in
                        try ReplayServer(endpoint: endpoint)
                    }
                )
            } else if let port = bus.replayEndpoint {
                // A TCP bus with keys: through the broker's replay port, behind its CURVE and rights.
                served = (
                    source,
                    try IngestServiceError.catching({ (error: ZMQError) in .replay(port, error) }) {
                        () throws(ZMQError) in
                        try BrokerReplayLink(context: zmq, bus: bus, problems: { log.warning($0) }) {
                            source.servedStreams
                        }
                    }
                )
            } else {
                log.warning(ReplayServer.notServedOnCURVE)
            }
        }
        let replay = served
        defer { replay?.server.close() }
        if let replay {
            let endpoint = replay.server.endpoint
            health.replay = { ReplayAnnouncement(endpoint: endpoint, streams: replay.source.streams()) }
        }
        // Replay requests are answered as they come, also while a recording's pose waits for
        // its time and after the source's end: those waits are waits for the replay socket (a
        // worker holds a camera's live poses behind a hole until the answer, which waited up to
        // a pose's interval, 17 ms at 60 Hz, or 20 ms once the source had ended).
        var replayWaits = ZMQWaitSet()
        let replayItem = try replay.map { replay throws(IngestServiceError) in
            try onBus { () throws(ZMQError) in try replayWaits.add(replay.server.socket) }
        }
        /// Waits at most `timeout` (`.zero`: only looks; whole milliseconds, rounded up) for a
        /// replay request, and answers what waits then.
        func serveReplay(waitingAtMost timeout: Duration = .zero) {
            guard let replay, let replayItem else {
                if timeout > .zero { ThreadSleep.sleep(timeout) }
                return
            }
            do {
                let ready = try replayWaits.wait(timeout: timeout)
                guard ready.contains(replayItem) || replay.server.hasWorkWithoutRequests else { return }
                try replay.server.serve(from: replay.source)
            } catch {
                log.warning("replay: \(error)")
                if timeout > .zero { ThreadSleep.sleep(timeout) }
            }
            // Its replies processed the socket's commands: asked before the next wait.
            replayWaits.touched(replayItem)
        }
        func report() -> [String: Int] {
            var values = counters.dictionary
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
        // Whether a subscription to the topic ever reached the ingest: the only thing a
        // publisher can know about delivery (it never knows whether a pose arrived).
        var subscribed = false

        if settings.waitSeconds > 0 {
            log.info("waiting for a subscriber to \(topic) on \(bus)")
            let found = try onBus { () throws(ZMQError) in
                try publisher.waitForSubscriber(
                    to: topic, timeout: .seconds(double: settings.waitSeconds),
                    isCancelled: {
                        // A camera's poses of nobody's interest: dropped, so the first ones sent are
                        // live rather than what the pipe held while the ingest waited.
                        counters.discarded += source.discardBufferedLivePoses()
                        counters.detector = source.detectorCounters
                        health.publishIfDue(counters: { report() }, via: publisher)
                        serveReplay()
                        return stop.isRequested
                    }, clock: startClock())
            }
            counters.discarded += source.discardBufferedLivePoses()
            if stop.isRequested { return }
            if !found {
                log.warning("nobody subscribed to \(topic) within \(settings.waitSeconds) s: sending anyway")
            }
            subscribed = found
        }
        log.info(
            "publishing \(settings.source) on \(topic) (pace \(source.isLive ? "live" : settings.pace.rawValue))"
        )

        // A source that waits for its poses (a detector, standard input) is waited for with the
        // replay socket (a camera's poses come 30 times a second at best, fewer from a detector
        // on a small box: a request answered only between two poses waited for the next one).
        let sourceItem =
            replayItem == nil ? nil : source.waitableDescriptor.flatMap { try? replayWaits.addDescriptor($0) }
        let elapsed = startClock()
        var lastProgress = Duration.zero
        var pace = RecordingPace(speed: settings.speed)
        var lastT: Double?
        let paced = settings.pace == .recording && !source.isLive
        var failure: String?

        loop: while !stop.isRequested {
            journal?.syncIfDue()
            // A paced pose looks at the replay socket while it waits for its time (at least once,
            // also when it is late), so the look here is for the sources that never wait.
            if !paced { serveReplay() }
            counters.detector = source.detectorCounters
            health.publishIfDue(counters: { report() }, via: publisher)
            if elapsed.now - lastProgress >= .seconds(5) {
                lastProgress = elapsed.now
                if !subscribed { subscribed = publisher.hasSubscriber(to: topic) }
                log.info(
                    "\(counters.sent) poses sent"
                        + (lastT.map { " (t=\(String(format: "%.1f", $0)) s)" } ?? "")
                        + (source.count.map { " of \($0)" } ?? "") + ", \(counters.dropped) dropped")
            }
            switch source.next(timeout: sourceItem == nil ? .milliseconds(100) : .zero) {
            case .end:
                break loop
            case .failed(let reason):
                failure = reason
                break loop
            case .idle:
                // Waited for with the replay socket: a request is answered while no pose comes.
                if sourceItem != nil { serveReplay(waitingAtMost: .milliseconds(100)) }
                continue
            case .malformed(let line, let reason):
                counters.malformedLines += 1
                log.warning("standard input line \(line): \(reason)")
                continue
            case .pose(let pose):
                if let resumeAfter, pose.timestamp <= resumeAfter {
                    // Sent before the restart (the stream resumed): not sent again.
                    counters.resumedSkipped += 1
                    continue
                }
                if paced {
                    switch pace.schedule(pose.timestamp, now: elapsed.now) {
                    case .at(let due):
                        // At most a millisecond late (the wait's whole milliseconds): the pose
                        // carries its own time.
                        repeat {
                            serveReplay(waitingAtMost: max(.zero, min(due - elapsed.now, .milliseconds(20))))
                            health.publishIfDue(counters: { report() }, via: publisher)
                        } while !stop.isRequested && elapsed.now < due
                        if stop.isRequested { break loop }
                    case .jump(let from, let to):
                        serveReplay()
                        counters.timeJumps += 1
                        if counters.timeJumps <= 10 || counters.timeJumps % 1000 == 0 {
                            log.warning(Self.jumpMessage(from: from, to: to, speed: settings.speed))
                        }
                    }
                }
                lastT = pose.timestamp
                do throws(BusPublishError) {
                    var queued = try publisher.publish(pose, on: topic)
                    if !queued, settings.pace == .max || source.isLive {
                        // At the high-water mark: wait for the queue to drain rather than drop.
                        counters.paused += 1
                        while !queued, !stop.isRequested {
                            serveReplay(waitingAtMost: .milliseconds(1))
                            queued = try publisher.resend()
                        }
                    }
                    if queued { counters.sent += 1 } else { counters.dropped += 1 }
                } catch {
                    switch error {
                    case .message(let error):
                        counters.invalid += 1
                        log.warning("pose at t=\(pose.timestamp) not sent: \(error)")
                    case .socket(let error):
                        throw .bus(bus.description, error)
                    }
                }
            }
        }
        counters.detector = source.detectorCounters
        // A source read to its end ends its stream: the next start begins a new one.
        if settings.keepServing, failure == nil, replay != nil {
            // The stream stays open (not ended): a restart resumes it, skips every pose, and
            // serves again.
            journal?.finish(ended: false)
            log.info("end of \(settings.source): serving its poses through replay until stopped")
            while !stop.isRequested {
                journal?.syncIfDue()
                health.publishIfDue(counters: { report() }, via: publisher)
                serveReplay(waitingAtMost: .milliseconds(20))
            }
        } else {
            journal?.finish(ended: !stop.isRequested && failure == nil)
        }
        health.publish(counters: report(), via: publisher)
        if let summary = source.detectorSummary { log.info(summary) }
        if let failure { throw .source(.failure(failure)) }
        if !subscribed { subscribed = publisher.hasSubscriber(to: topic) }
        let seconds = elapsed.seconds
        // "sent": handed to the bus. A publisher cannot know what was delivered; it only knows
        // whether anyone subscribed.
        let summary =
            "\(counters.sent) poses sent to the broker in \(String(format: "%.1f", seconds)) s, "
            + "\(counters.dropped) dropped"
            + (counters.malformedLines > 0 ? ", \(counters.malformedLines) malformed lines" : "")
            + (counters.timeJumps > 0 ? ", \(counters.timeJumps) jumps in time not waited for" : "")
            + (source.loops > 0 ? ", \(source.loops) loops" : "")
            + (counters.resumedSkipped > 0
                ? ", \(counters.resumedSkipped) sent before the restart skipped" : "")
        let ending = stop.isRequested ? "stopped" : "done"
        if !stop.isRequested, counters.sent + counters.dropped + counters.resumedSkipped == 0 {
            log.info("\(ending): \(summary)")
            throw .source(.failure(Self.nothingUsable(settings.source, counters: counters)))
        }
        guard subscribed || counters.sent == 0 else {
            // Nothing can have been delivered: said as a warning, not a failure, because an
            // ingest started before its workers (or under `kinesia up`, which restarts what
            // fails) did its job; the operator must still not read it as a delivery.
            log.warning(
                "\(ending): \(summary), but nobody ever subscribed to \(topic) on \(settings.process.bus.description): "
                    + "none of them was delivered (is a worker running, and is the broker reachable?)")
            return
        }
        log.info("\(ending): \(summary) (delivery is not confirmed)")
    }

    /// What `body` returns; a socket error it throws says the bus cannot be reached.
    private func onBus<Value: ~Copyable>(_ body: () throws(ZMQError) -> Value) throws(IngestServiceError)
        -> Value
    {
        let bus = configuration.process.bus.description
        return try IngestServiceError.catching({ (error: ZMQError) in .bus(bus, error) }, body)
    }

    /// Opens the journal of the camera's poses (unless `--no-journal`) and its stream identity
    /// (`pose+<camera>`). A recording or simulation whose stream is resumed (the same source,
    /// stopped before its end) goes on after the last pose journaled: the poses up to that
    /// pose's time are skipped. A live source (standard input, a camera, a video through the
    /// detector) always starts a new stream.
    /// - Returns: The journal, and the time of the last pose sent before a restart (`nil`: send
    ///   every pose).
    private static func journal(
        _ settings: Configuration, source: PoseSource, publisher: BusPublisher, log: Logger
    ) throws(PublishJournalError) -> (PublishJournal?, Double?) {
        guard !settings.journal.disabled else { return (nil, nil) }
        let journal = try PublishJournal(
            options: settings.journal, environment: settings.environment,
            bus: settings.process.bus.description,
            log: log)
        let camera = settings.topic.camera ?? ""
        let resumable = !source.isLive && settings.source != "-" && !CameraSource.isCamera(settings.source)
        let attached = try journal.attach(
            [settings.topic], identity: "pose+\(camera)", session: "\(settings.source) loop=\(settings.loop)",
            resumable: resumable, to: publisher)
        journal.install(on: publisher)
        var resumeAfter: Double?
        if attached.resumed, let last = attached.lastSequences[settings.topic] {
            let stream = JournalStream(topic: settings.topic, streamID: attached.stream)
            if let entry = try? journal.store.openReader(for: stream).entries(from: last, limit: 1).first,
                entry.frames.count == 2, let decoded = try? PoseCodec.decode(entry.frames[1])
            {
                resumeAfter = decoded.pose.timestamp
            }
        }
        log.info(
            attached.resumed
                ? "resuming stream \(attached.stream) of \(settings.topic) after pose #\(attached.lastSequences[settings.topic].map(String.init) ?? "-")"
                    + (resumeAfter.map { " (t=\($0)): the poses up to there are not sent again" } ?? "")
                : "new stream \(attached.stream) of \(settings.topic)")
        log.info("journaling in \(journal.stateDirectory) (fsync \(settings.journal.fsync))")
        return (journal, resumeAfter)
    }

    /// The warning for a jump of the recording's time that is not waited for.
    public static func jumpMessage(from: Double, to: Double, speed: Double) -> String {
        let times = "from t=\(from) to t=\(to)"
        guard to > from else {
            return "the recording's time goes back \(times): sent at once, the pace goes on from there"
        }
        let wait = (to - from) / speed
        return "the recording's time jumps \(times): a wait of \(Self.describe(seconds: wait)) "
            + "(over \(Int(RecordingPace.longestWait)) s) skipped, the pace goes on from there"
    }

    /// `12.5 s`, `3.2 h`, `11.6 days`.
    private static func describe(seconds: Double) -> String {
        if seconds < 3600 { return String(format: "%.1f s", seconds) }
        if seconds < 86_400 { return String(format: "%.1f h", seconds / 3600) }
        return String(format: "%.1f days", seconds / 86_400)
    }

    /// The failure of a source that ended without a pose to send.
    private static func nothingUsable(_ source: String, counters: Counters) -> String {
        var found: [String] = []
        if counters.malformedLines > 0 {
            found.append(
                "\(counters.malformedLines) malformed line\(counters.malformedLines == 1 ? "" : "s")")
        }
        if counters.invalid > 0 {
            found.append(
                "\(counters.invalid) pose\(counters.invalid == 1 ? "" : "s") that could not be encoded")
        }
        let name = source == "-" ? "standard input" : source
        return "nothing sent: \(name) held no usable pose"
            + (found.isEmpty ? "" : " (" + found.joined(separator: ", ") + ")")
    }
}
