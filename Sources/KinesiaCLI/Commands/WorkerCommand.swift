import Foundation
import KinesiaBus
import KinesiaMotion
import KinesiaWire

/// `kinesia worker --camera ID --session NAME=EXERCISE:SIDE ...`: hosts motion sessions on the
/// poses of the bus and publishes what they find.
///
/// Each session is one ``MotionAnalyzer`` (the value-type core of ``MotionSession``). The
/// worker subscribes `pose/<camera>/` for each camera of its sessions, runs every pose through
/// every session of that camera, and publishes each event on `event/<camera>/<session>/` as
/// the JSON line `kinesia analyze --format json` prints, and the snapshot on
/// `snapshot/<camera>/<session>/` (see ``SnapshotThrottle``). Its health report counts poses,
/// decode errors (by reason), gaps, sender restarts, duplicates, rejected poses, events and
/// snapshots.
///
/// A sender restart (a new stream id on a camera's topic) keeps the sessions when time goes on:
/// a restarted ingest of a live camera carries on with the same patient and a clock that keeps
/// running, so the counts stay. When the new stream's first pose is not later than the last
/// pose a session accepted, the sender's time base started over (a recording replayed, a
/// detector whose clock starts at zero): the kept session would drop every pose as going back
/// in time, so that session starts over instead (counted in `sessionResets`). Both cases
/// depend on the poses and stream ids only, so the outcome is deterministic.
public struct WorkerCommand: ParsableCommand {
    /// `worker`, with its help.
    public static let configuration = CommandConfiguration(
        name: "worker", summary: "Host motion sessions on a camera's poses; publish events and snapshots.",
        discussion: """
            Each --session [CAMERA/]NAME=EXERCISE:SIDE (CAMERA defaults to --camera) analyses \
            pose/<camera>/ and publishes every event on event/<camera>/<name>/ (the JSON of \
            'kinesia analyze --format json') and its snapshot on snapshot/<camera>/<name>/ \
            (at most --snapshot-rate per second of pose time, and at every change of the rep \
            counts). Counters on health/<name>/ every second. Stops on SIGINT/SIGTERM after \
            the poses already received.
            """)

    /// The options.
    public static var arguments: [Argument<WorkerCommand>] {
        [
            .option("camera", \.camera, valueName: "id", help: "The camera of sessions that name none."),
            .option(
                "session", \.sessions, valueName: "[camera/]name=exercise:side", required: true,
                help: "A session to host."),
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "worker-<pid>"),
            .option(
                "snapshot-rate", \.snapshotRate, valueName: "hz",
                help: "Snapshots per second of pose time, at most (count changes always send one)."),
        ]
    }

    /// `--camera`.
    public var camera: String?
    /// `--session` values.
    public var sessions: [String] = []
    /// `--bus`.
    public var bus: String?
    /// `--name`.
    public var name: String?
    /// `--snapshot-rate`.
    public var snapshotRate = 15.0

    /// A command with every default.
    public init() {}

    /// The sessions, parsed and checked.
    /// - Throws: ``CLIError/usage(_:)`` for a malformed or duplicate session, an unknown
    ///   exercise or side.
    public func parsedSessions() throws(CLIError) -> [WorkerSession] {
        if let camera, !Topic.isValidName(camera) {
            throw CLIError.usage(
                "invalid camera \"\(camera)\": use 1 to \(Topic.maximumNameLength) letters, digits, '.', '_' or '-'"
            )
        }
        var result: [WorkerSession] = []
        var seen: Set<String> = []
        for text in sessions {
            let session = try WorkerSession(parsing: text, defaultCamera: camera)
            guard seen.insert(session.camera + "/" + session.name).inserted else {
                throw CLIError.usage("session \(session.camera)/\(session.name) is given twice")
            }
            result.append(session)
        }
        guard !result.isEmpty else { throw CLIError.usage("give at least one --session") }
        return result
    }

    /// Checks the sessions and the rate.
    public func validate() throws(CLIError) {
        _ = try parsedSessions()
        guard snapshotRate > 0 else { throw CLIError.usage("--snapshot-rate must be positive") }
    }

    /// Runs the sessions until a signal.
    public func run(context: CommandContext) async throws {
        let sessions = try parsedSessions()
        let bus = try BusProcess.bus(bus, environment: context.environment)
        let name = try BusProcess.processName(
            name, environment: context.environment, fallback: "worker-\(getpid())")
        let rate = snapshotRate
        try await BusProcess.run(context: context) { stop in
            try Self.serve(sessions, bus: bus, name: name, snapshotRate: rate, stop: stop, context: context)
        }
    }

    /// One hosted session and its topics.
    private struct Hosted {
        var spec: WorkerSession
        var analyzer: MotionAnalyzer
        var throttle: SnapshotThrottle
        /// The timestamp of the last pose the analysis accepted.
        var lastAccepted: Double?
        /// Rejections counted by the analyzers this session had before a reset.
        var earlierRejections = PoseRejections()
        let eventTopic: Topic
        let snapshotTopic: Topic
    }

    private static func serve(
        _ specs: [WorkerSession], bus: BusAddress, name: String, snapshotRate: Double, stop: StopToken,
        context: CommandContext
    ) throws {
        let log = context.logger
        var hosted: [Hosted] = []
        var byCamera: [String: [Int]] = [:]
        for spec in specs {
            byCamera[spec.camera, default: []].append(hosted.count)
            hosted.append(
                Hosted(
                    spec: spec, analyzer: MotionAnalyzer(exercise: spec.exercise, side: spec.side),
                    throttle: SnapshotThrottle(rate: snapshotRate),
                    eventTopic: try Topic.event(camera: spec.camera, session: spec.name),
                    snapshotTopic: try Topic.snapshot(camera: spec.camera, session: spec.name)))
        }
        let cameras = byCamera.keys.sorted()

        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let publisher = try BusPublisher(
            context: zmq, bus: bus, linger: .seconds(1), connectionTimeout: .seconds(2))
        defer { publisher.close() }
        let subscriber = try BusSubscriber(
            context: zmq, bus: bus,
            prefixes: try cameras.map { (camera) throws(TopicError) in
                try TopicPrefix.poses(camera: camera)
            })
        defer { subscriber.close() }
        // Each pose is decoded once, into flat form, and analysed by every session of its camera.
        subscriber.decodesPosesFlat = true
        var health = try HealthPublisher(process: name, role: "worker")
        var poses = 0
        var events = 0
        var snapshots = 0
        var sessionResets = 0
        var warnings: [String: Int] = [:]

        func counters() -> [String: Int] {
            let totals = subscriber.tracker.totals
            var values: [String: Int] = [
                "poses": poses, "events": events, "snapshots": snapshots, "sessions": hosted.count,
                "sessionResets": sessionResets,
                "gaps": Int(clamping: totals.missing), "restarts": Int(clamping: totals.restarts),
                "duplicates": Int(clamping: totals.duplicates), "decodeErrors": subscriber.decodeErrorCount,
            ]
            for (reason, count) in subscriber.decodeErrors { values["decodeErrors.\(reason)"] = count }
            var rejected = 0
            for session in hosted {
                let counts = session.earlierRejections.adding(session.analyzer.rejectedPoses)
                rejected += counts.total
                values["rejected.\(session.spec.camera).\(session.spec.name)"] = counts.total
                for reason in PoseRejections.Reason.allCases where counts[reason] > 0 {
                    values["rejected.\(reason.rawValue)", default: 0] += counts[reason]
                }
            }
            values["rejected"] = rejected
            return values
        }

        func handle(_ delivery: BusSubscriber.Delivery) {
            switch delivery {
            case .malformed(let topic, let reason):
                let seen = warnings[reason.code, default: 0] + 1
                warnings[reason.code] = seen
                if seen <= 10 || seen % 1000 == 0 {
                    log.warning("dropped a malformed message on \"\(topic)\" (\(seen) so far): \(reason)")
                }
            case .message:
                // Poses come as .flatPose; the subscription has no other kind.
                return
            case .flatPose(let topic, let header, let pose, let result):
                guard let camera = topic.camera, let indices = byCamera[camera] else { return }
                switch result {
                case .gap(let missed):
                    log.notice("\(topic): \(missed) poses missing before #\(header.sequence)")
                case .newStream(restart: true, _):
                    var reset: [String] = []
                    for index in indices {
                        guard let last = hosted[index].lastAccepted, !(pose.timestamp > last) else {
                            continue
                        }
                        let spec = hosted[index].spec
                        hosted[index].earlierRejections = hosted[index].earlierRejections.adding(
                            hosted[index].analyzer.rejectedPoses)
                        hosted[index].analyzer = MotionAnalyzer(exercise: spec.exercise, side: spec.side)
                        hosted[index].throttle = SnapshotThrottle(rate: snapshotRate)
                        hosted[index].lastAccepted = nil
                        sessionResets += 1
                        reset.append(spec.name)
                    }
                    log.notice(
                        "\(topic): the sender restarted (stream \(header.streamID)); "
                            + (reset.isEmpty
                                ? "sessions kept"
                                : "its time starts over at t=\(pose.timestamp): session(s) "
                                    + reset.joined(separator: ", ") + " start over"))
                default: break
                }
                poses += 1
                for index in indices {
                    let rejectedBefore = hosted[index].analyzer.rejectedPoses.total
                    let found = hosted[index].analyzer.process(pose)
                    for event in found {
                        let line = MotionJSON.encode(event, at: pose.timestamp)
                        if (try? publisher.publish(json: line, kind: .event, on: hosted[index].eventTopic))
                            != nil
                        {
                            events += 1
                        }
                    }
                    guard hosted[index].analyzer.rejectedPoses.total == rejectedBefore else { continue }
                    hosted[index].lastAccepted = pose.timestamp
                    let snapshot = hosted[index].analyzer.snapshot
                    if hosted[index].throttle.shouldPublish(snapshot, at: pose.timestamp) {
                        let line = MotionJSON.encode(snapshot, at: pose.timestamp)
                        if (try? publisher.publish(
                            json: line, kind: .snapshot, on: hosted[index].snapshotTopic))
                            != nil
                        {
                            snapshots += 1
                        }
                    }
                }
            }
        }

        log.info(
            "hosting "
                + hosted.map { "\($0.spec.camera)/\($0.spec.name)=\($0.spec.exercise.id):\($0.spec.side)" }
                .joined(separator: ", ") + " on \(bus)")
        while !stop.isRequested {
            health.publishIfDue(counters: counters, via: publisher)
            guard let delivery = try subscriber.receive(timeout: .milliseconds(100)) else { continue }
            handle(delivery)
            // Drain what is already there before looking at the clock again.
            var burst = 0
            while burst < 10_000, let next = try subscriber.tryReceive() {
                handle(next)
                burst += 1
            }
        }
        // Graceful: finish the poses already received (at most half a second), then report.
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(500))
        while clock.now < deadline, let next = try subscriber.tryReceive() { handle(next) }
        health.publish(counters: counters(), via: publisher)
        let totals = subscriber.tracker.totals
        log.info(
            "stopped: \(poses) poses, \(events) events, \(snapshots) snapshots, \(totals.missing) missing, "
                + "\(subscriber.decodeErrorCount) decode errors")
    }
}

extension PoseRejections {
    /// The counts of both, reason by reason.
    fileprivate func adding(_ other: PoseRejections) -> PoseRejections {
        PoseRejections(
            nonFinite: nonFinite &+ other.nonFinite,
            timestampNotIncreasing: timestampNotIncreasing &+ other.timestampNotIncreasing,
            absurdCoordinates: absurdCoordinates &+ other.absurdCoordinates,
            absurdTimestamp: absurdTimestamp &+ other.absurdTimestamp)
    }
}
