import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaJournal
public import KinesiaMotion
public import KinesiaPublishJournal
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// `kinesia ingest --camera ID --source SRC`: publishes a camera's poses on `pose/<camera>/`.
///
/// SRC is a JSON Lines recording, an OpenPose folder, `-` (standard input: one JSON pose per
/// line, as any detector can print them), or `sim:EXERCISE[,key=value...]` (the built-in
/// simulator). The ingest waits until something subscribes to its camera (at most
/// `--wait-seconds`), then sends at the recording's own pace or as fast as possible.
///
/// High-water mark: the ingest's socket refuses a send instead of dropping it silently.
/// `--pace max` then pauses a millisecond and retries, so a burst never overruns the broker's
/// queue; `--pace recording` (live timing) drops the pose and counts it: poses are
/// drop-and-detect, the receivers see the gap in the sequence numbers.
public struct IngestCommand: ParsableCommand {
    /// How fast poses go out.
    public enum Pace: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// At the pace of the poses' timestamps.
        case recording
        /// As fast as the bus takes them.
        case max
    }

    /// `ingest`, with its help.
    public static let configuration = CommandConfiguration(
        name: "ingest", summary: "Publish a camera's poses on the bus (pose/<camera>/).",
        discussion: """
            SRC: a JSON Lines recording, a folder of OpenPose JSON frames, - for standard input \
            (one pose per line: {"t","w","h","points","confidence"}; malformed lines are reported \
            and skipped), or sim:EXERCISE[,seed=N,reps=N,side=left|right|both,fps=N,...] for the \
            built-in simulator; or video:PATH (a video file) or camera:/dev/videoN (a webcam) through \
            the pose detector (MediaPipe Pose, installed by scripts/setup), with --mirrored, \
            --roi X0,Y0,X1,Y1, and --size WxH and --fps for a camera. A camera is always live: the \
            newest frame is analysed and older ones dropped (framesDropped on health/).
            Waits until something subscribes to pose/<camera>/ (at most --wait-seconds, then sends \
            anyway). Standard input is sent as it comes, never paced. Progress goes to standard \
            error every 5 seconds. With --pace recording, a jump of the recording's time (a wait \
            over 5 s, or time going back) is not waited for: it is logged and the pace goes on \
            from there (timeJumps). Exits 0 at the end of the source, or on SIGINT/SIGTERM; 1 when \
            the source ended without a usable pose (an empty file, or only malformed lines); warns \
            when poses were sent but nobody ever subscribed to them (none can have been delivered).
            """)

    /// The options.
    public static var arguments: [Argument<IngestCommand>] {
        [
            .option(
                "camera", \.camera, valueName: "id", required: true, help: "The camera name (pose/<id>/)."),
            .option(
                "source", \.source, valueName: "src", required: true,
                help:
                    "A recording, an OpenPose folder, - (standard input), sim:EXERCISE[,key=value...], "
                    + "video:PATH or camera:/dev/videoN."),
            .option(
                "pace", \.pace, valueName: "pace", help: "How fast to send."),
            .option(
                "speed", \.speed, valueName: "factor",
                help: "With --pace recording (or a video file given as camera:): play this many times faster."
            ),
            .flag("loop", \.loop, help: "Start over at the end, timestamps still increasing."),
            .flag(
                "keep-serving", \.keepServing,
                help:
                    "At the end of a recording or simulation, keep answering replay requests for its poses "
                    + "until SIGINT/SIGTERM (for workers that restart later); the stream is not ended."),
            .option(
                "wait-seconds", \.waitSeconds, valueName: "s",
                help: "How long to wait for a subscriber before sending anyway (0: do not wait)."),
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "ingest-<camera>"),
            .option(
                "keypoints", \.keypoints, valueName: "order",
                help: "OpenPose keypoint order (default: from the keypoint count)."),
            .option(
                "fps", \.fps, valueName: "fps",
                help: "OpenPose frames per second, or the frame rate asked of a camera."),
        ] + CameraArguments.arguments(\.detector, forDevices: true)
            + JournalOptions.arguments(
                \.journal,
                resumes: "Start a new pose stream even when the state directory has this camera's stream "
                    + "of the same source to resume.")
            + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--camera`.
    public var camera: String?
    /// `--source`.
    public var source: String?
    /// `--pace`.
    public var pace = Pace.recording
    /// `--speed`.
    public var speed = 1.0
    /// `--loop`.
    public var loop = false
    /// `--keep-serving`.
    public var keepServing = false
    /// `--wait-seconds`.
    public var waitSeconds = 30.0
    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()
    /// `--name`.
    public var name: String?
    /// `--keypoints`.
    public var keypoints: OpenPoseFormat?
    /// `--fps`.
    public var fps = 30.0
    /// `--mirrored`, `--roi`, `--size` (for `video:` and `camera:` sources).
    public var detector = CameraOptions()

    /// `--state`, `--no-journal`, `--fsync`, `--journal-max-bytes`, `--journal-max-age`,
    /// `--new-session`.
    public var journal = JournalOptions()

    /// A command with every default.
    public init() {}

    /// Checks the camera name and the numbers.
    public func validate() throws(CLIError) {
        if let camera, !Topic.isValidName(camera) {
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        guard speed > 0 else { throw CLIError.usage("--speed must be positive, got \(speed)") }
        guard waitSeconds >= 0 else { throw CLIError.usage("--wait-seconds must be 0 or more") }
        guard fps > 0 else { throw CLIError.usage("--fps must be positive, got \(fps)") }
        if loop, let source, CameraSource.isCamera(source) {
            throw CLIError.usage("--loop applies to recordings and simulations, not to \(source)")
        }
    }

    /// Publishes the source.
    public func run(context: CommandContext) async throws {
        guard let camera, let source else { throw CLIError.usage("missing --camera or --source") }
        var cameraOptions = detector
        cameraOptions.fps = fps
        cameraOptions.speed = speed
        let topic = try Topic.pose(camera: camera)
        let (bus, insecure) = try BusProcess.bus(bus, security: security, role: .ingest, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment, fallback: BusProcess.derivedName("ingest", camera))
        let log = context.logger
        let poses = try PoseSource.open(
            source, loop: loop, openPose: OpenPoseRecording.Options(format: keypoints, fps: fps),
            camera: cameraOptions, onDetectorMessage: { log.warning("detector: \($0)") },
            onWarning: { log.warning($0) })
        let settings = Settings(
            topic: topic, name: name, pace: pace, speed: speed, waitSeconds: waitSeconds, source: source,
            busDescription: bus.description, loop: loop, journal: journal, insecure: insecure,
            keepServing: keepServing)
        let sendable = UncheckedSource(value: poses)
        try await BusProcess.run(context: context) { stop in
            var poses = sendable.value
            try Self.publish(&poses, bus: bus, settings: settings, stop: stop, context: context)
        }
    }

    private struct Settings: Sendable {
        var topic: Topic
        var name: String
        var pace: Pace
        var speed: Double
        var waitSeconds: Double
        var source: String
        var busDescription = ""
        var loop = false
        var journal = JournalOptions()
        var insecure = false
        var keepServing = false
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

    private static func publish(
        _ source: inout PoseSource, bus: BusAddress, settings: Settings, stop: StopToken,
        context: CommandContext
    ) throws {
        let log = context.logger
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let publisher = try BusPublisher(
            context: zmq, bus: bus, waitsForSubscribers: true, linger: .seconds(2))
        defer { publisher.close() }
        var health = try BusProcess.healthPublisher(
            process: settings.name, role: "ingest", insecure: settings.insecure, log: log)
        var counters = Counters()
        let topic = settings.topic
        let (journal, resumeAfter) = try Self.journal(
            settings, source: source, publisher: publisher, context: context)
        // The pose journal is served through replay (workers fill gaps and replay a session's
        // poses from it after a restart), announced on health/.
        let replay: (source: JournalReplaySource, server: ReplayServer)? =
            try journal.flatMap { journal in
                guard let endpoint = try ReplayServer.endpoint(bus: bus, process: settings.name) else {
                    log.warning(ReplayServer.notServedOnCURVE)
                    return nil
                }
                return (
                    JournalReplaySource(
                        store: journal.store, current: [topic: publisher.streamID(on: topic)]),
                    try ReplayServer(endpoint: endpoint)
                )
            }
        defer { replay?.server.close() }
        if let replay {
            let endpoint = replay.server.endpoint
            health.replay = { ReplayAnnouncement(endpoint: endpoint, streams: replay.source.streams()) }
        }
        func serveReplay() {
            guard let replay else { return }
            do {
                try replay.server.serve(from: replay.source)
            } catch {
                log.warning("replay: \(error)")
            }
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
            let found = try publisher.waitForSubscriber(
                to: topic, timeout: .seconds(double: settings.waitSeconds),
                isCancelled: {
                    // A camera's poses of nobody's interest: dropped, so the first ones sent are
                    // live rather than what the pipe held while the ingest waited.
                    counters.discarded += source.discardBufferedLivePoses()
                    counters.detector = source.detectorCounters
                    health.publishIfDue(counters: { report() }, via: publisher)
                    serveReplay()
                    return stop.isRequested
                })
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

        let clock = ContinuousClock()
        let started = clock.now
        var lastProgress = started
        var pace = RecordingPace(speed: settings.speed)
        var lastT: Double?
        let paced = settings.pace == .recording && !source.isLive
        var failure: String?

        loop: while !stop.isRequested {
            journal?.syncIfDue()
            serveReplay()
            counters.detector = source.detectorCounters
            health.publishIfDue(counters: { report() }, via: publisher)
            if clock.now - lastProgress >= .seconds(5) {
                lastProgress = clock.now
                if !subscribed { subscribed = publisher.hasSubscriber(to: topic) }
                log.info(
                    "\(counters.sent) poses sent"
                        + (lastT.map { " (t=\(String(format: "%.1f", $0)) s)" } ?? "")
                        + (source.count.map { " of \($0)" } ?? "") + ", \(counters.dropped) dropped")
            }
            switch source.next(timeout: .milliseconds(100)) {
            case .end:
                break loop
            case .failed(let reason):
                failure = reason
                break loop
            case .idle:
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
                    switch pace.schedule(pose.timestamp, now: clock.now) {
                    case .at(let due):
                        while !stop.isRequested, clock.now < due {
                            ThreadSleep.sleep(min(clock.now.duration(to: due), .milliseconds(20)))
                            health.publishIfDue(counters: { report() }, via: publisher)
                            serveReplay()
                        }
                        if stop.isRequested { break loop }
                    case .jump(let from, let to):
                        counters.timeJumps += 1
                        if counters.timeJumps <= 10 || counters.timeJumps % 1000 == 0 {
                            log.warning(Self.jumpMessage(from: from, to: to, speed: settings.speed))
                        }
                    }
                }
                lastT = pose.timestamp
                do {
                    var queued = try publisher.publish(pose, on: topic)
                    if !queued, settings.pace == .max || source.isLive {
                        // At the high-water mark: wait for the queue to drain rather than drop.
                        counters.paused += 1
                        while !queued, !stop.isRequested {
                            ThreadSleep.sleep(.milliseconds(1))
                            serveReplay()
                            queued = try publisher.resend()
                        }
                    }
                    if queued { counters.sent += 1 } else { counters.dropped += 1 }
                } catch let error as WireError {
                    counters.invalid += 1
                    log.warning("pose at t=\(pose.timestamp) not sent: \(error)")
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
                serveReplay()
                ThreadSleep.sleep(.milliseconds(20))
            }
        } else {
            journal?.finish(ended: !stop.isRequested && failure == nil)
        }
        health.publish(counters: report(), via: publisher)
        if let summary = source.detectorSummary { log.info(summary) }
        if let failure { throw CLIError.failure(failure) }
        if !subscribed { subscribed = publisher.hasSubscriber(to: topic) }
        let elapsed = (clock.now - started).seconds
        // "sent": handed to the bus. A publisher cannot know what was delivered; it only knows
        // whether anyone subscribed.
        let summary =
            "\(counters.sent) poses sent to the broker in \(String(format: "%.1f", elapsed)) s, "
            + "\(counters.dropped) dropped"
            + (counters.malformedLines > 0 ? ", \(counters.malformedLines) malformed lines" : "")
            + (counters.timeJumps > 0 ? ", \(counters.timeJumps) jumps in time not waited for" : "")
            + (source.loops > 0 ? ", \(source.loops) loops" : "")
            + (counters.resumedSkipped > 0
                ? ", \(counters.resumedSkipped) sent before the restart skipped" : "")
        let ending = stop.isRequested ? "stopped" : "done"
        if !stop.isRequested, counters.sent + counters.dropped + counters.resumedSkipped == 0 {
            log.info("\(ending): \(summary)")
            throw CLIError.failure(Self.nothingUsable(settings.source, counters: counters))
        }
        guard subscribed || counters.sent == 0 else {
            // Nothing can have been delivered: said as a warning, not a failure, because an
            // ingest started before its workers (or under `kinesia up`, which restarts what
            // fails) did its job; the operator must still not read it as a delivery.
            log.warning(
                "\(ending): \(summary), but nobody ever subscribed to \(topic) on \(settings.busDescription): "
                    + "none of them was delivered (is a worker running, and is the broker reachable?)")
            return
        }
        log.info("\(ending): \(summary) (delivery is not confirmed)")
    }

    /// Opens the journal of the camera's poses (unless `--no-journal`) and its stream identity
    /// (`pose+<camera>`). A recording or simulation whose stream is resumed (the same source,
    /// stopped before its end) goes on after the last pose journaled: the poses up to that
    /// pose's time are skipped. A live source (standard input, a camera, a video through the
    /// detector) always starts a new stream.
    /// - Returns: The journal, and the time of the last pose sent before a restart (`nil`: send
    ///   every pose).
    private static func journal(
        _ settings: Settings, source: PoseSource, publisher: BusPublisher, context: CommandContext
    ) throws -> (PublishJournal?, Double?) {
        guard !settings.journal.disabled else { return (nil, nil) }
        let log = context.logger
        let journal = try PublishJournal(
            options: settings.journal, environment: context.environment, bus: settings.busDescription,
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
    static func jumpMessage(from: Double, to: Double, speed: Double) -> String {
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
