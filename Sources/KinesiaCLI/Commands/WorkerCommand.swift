import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaWire

/// `kinesia worker --camera ID --session NAME=EXERCISE:SIDE ...`: hosts motion sessions on the
/// poses of the bus and publishes what they find.
///
/// The command is the socket loop only. It subscribes `pose/<camera>/` for each camera of its
/// sessions, hands every delivery to a ``WorkerCore`` (which hosts the sessions and makes every
/// decision: fan-out, events, snapshots, sender restarts, counters), performs the actions the
/// core returns (publish each event on `event/<camera>/<session>/` as the JSON line
/// `kinesia analyze --format json` prints, and the snapshot on `snapshot/<camera>/<session>/`;
/// log notices), and tells the core how each publish went. Its health report, about once a
/// second on `health/<name>/`, is ``WorkerCore/healthCounters(sequence:)``: poses, decode errors
/// (by reason), gaps, sender restarts, duplicates, rejected poses, events, snapshots and failed
/// publishes (by reason).
public struct WorkerCommand: ParsableCommand {
    /// `worker`, with its help.
    public static let configuration = CommandConfiguration(
        name: "worker", summary: "Host motion sessions on a camera's poses; publish events and snapshots.",
        discussion: """
            Each --session [CAMERA/]NAME=EXERCISE:SIDE (CAMERA defaults to --camera) analyses \
            pose/<camera>/ and publishes every event on event/<camera>/<name>/ (the JSON of \
            'kinesia analyze --format json') and its snapshot on snapshot/<camera>/<name>/ \
            (at most --snapshot-rate per second of pose time, and at every change of the rep \
            counts). A sender restart keeps the sessions and their counts; when the new stream's \
            time starts over, those sessions start their time over (timeBaseRestarts), a rep under \
            way is dropped. Counters on health/<name>/ every second, failed \
            publishes included. Stops on SIGINT/SIGTERM after the poses already received.
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
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
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
            name, environment: context.environment, fallback: BusProcess.derivedName("worker", "\(getpid())"))
        let rate = snapshotRate
        try await BusProcess.run(context: context) { stop in
            try Self.serve(sessions, bus: bus, name: name, snapshotRate: rate, stop: stop, context: context)
        }
    }

    private static func serve(
        _ specs: [WorkerSession], bus: BusAddress, name: String, snapshotRate: Double, stop: StopToken,
        context: CommandContext
    ) throws {
        let log = context.logger
        var core = try WorkerCore(sessions: specs, snapshotRate: snapshotRate)

        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let publisher = try BusPublisher(
            context: zmq, bus: bus, linger: .seconds(1), connectionTimeout: .seconds(2))
        defer { publisher.close() }
        let subscriber = try BusSubscriber(
            context: zmq, bus: bus,
            prefixes: try core.cameras.map { (camera) throws(TopicError) in
                try TopicPrefix.poses(camera: camera)
            })
        defer { subscriber.close() }
        // Each pose is decoded once, into flat form, and analysed by every session of its camera.
        subscriber.decodesPosesFlat = true
        // Every event published is kept (the last 100,000 per session and run) and served to
        // consumers that missed some (replay); the lead swaps in the journal here.
        let replay = InMemoryReplaySource(capacityPerStream: InMemoryReplaySource.defaultCapacityPerStream)
        let stream = publisher.streamID
        publisher.recorder = { topic, sequence, frames in
            guard topic.kind == .event else { return }
            replay.append(topic: topic, stream: stream, sequence: sequence, frames: frames)
        }
        let server = try ReplayServer(
            context: zmq, endpoint: try ReplayServer.endpoint(bus: bus, process: name))
        defer { server.close() }
        var health = try HealthPublisher(process: name, role: "worker", problems: { log.warning($0) })
        let endpoint = server.endpoint
        health.replay = { ReplayAnnouncement(endpoint: endpoint, streams: replay.streams()) }
        // Reused for every delivery: a pose that publishes nothing allocates nothing.
        var actions: [WorkerCore.Action] = []
        actions.reserveCapacity(64)

        func handle(_ delivery: BusSubscriber.Delivery) {
            switch delivery {
            case .malformed(let topic, let reason):
                core.receiveMalformed(topic: topic, reason: reason, into: &actions)
            case .message:
                // Poses come as .flatPose; the subscription has no other kind.
                return
            case .flatPose(let topic, let header, let pose, let result):
                core.receive(pose, on: topic, header: header, sequence: result, into: &actions)
            }
            for action in actions {
                switch action {
                case .publish(let publication):
                    core.published(publication, outcome: send(publication))
                case .notice(let notice) where notice.isWarning:
                    log.warning(notice.description)
                case .notice(let notice):
                    log.notice(notice.description)
                }
            }
        }

        func send(_ publication: WorkerCore.Publication) -> WorkerCore.PublishOutcome {
            do {
                let queued = try publisher.publish(
                    json: publication.json, kind: publication.kind, on: publication.topic)
                return queued ? .sent : .notQueued
            } catch let error as WireError {
                return .failed(reason: error.code)
            } catch {
                return .failed(reason: "socket")
            }
        }

        func counters() -> [String: Int] {
            core.healthCounters(sequence: subscriber.tracker.totals).merging(server.counters) { own, _ in own
            }
        }

        log.info(
            "hosting "
                + specs.map { "\($0.camera)/\($0.name)=\($0.exercise.id):\($0.side)" }
                .joined(separator: ", ") + " on \(bus)")
        while !stop.isRequested {
            health.publishIfDue(counters: counters, via: publisher)
            var poller = Poller()
            poller.add(subscriber.socket, for: .readable)
            poller.add(server.socket, for: .readable)
            _ = try poller.poll(timeout: .milliseconds(100))
            try server.serve(from: replay)
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
            "stopped: \(core.poses) poses, \(core.events) events, \(core.snapshots) snapshots, "
                + "\(totals.missing) missing, \(core.decodeErrorCount) decode errors, "
                + "\(core.publishFailureCount) failed publishes")
    }
}
