import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaService
import KinesiaWire

/// What a cue consumer (`kinesia voice`, `kinesia haptic`) does with the messages of its
/// ``CueTarget``: made, used and finished on the consumer's bus thread (``CueConsumer``), so
/// that what it owns (a speech engine, a device) never changes threads.
protocol CueHandler: AnyObject {
    /// An event of the camera or session followed.
    func receive(_ event: BusEvent) throws
    /// A snapshot: every event up to its time has been received.
    func receive(_ snapshot: BusSnapshot) throws
    /// The sender of `topic` restarted (a worker started again).
    /// - Returns: Whether the handler dealt with it (and logged it); if not, it is logged as a gap.
    func senderRestarted(_ topic: Topic) -> Bool
    /// Called between messages, at least every 100 ms (a device to open again...).
    func idle()
    /// The end: decides what still waits.
    func finish() throws
    /// The handler's counters, reported on `health/<name>/` with the loop's own.
    var counters: [String: Int] { get }
}

/// The loop that `kinesia voice` and `kinesia haptic` share: subscribes to a ``CueTarget`` on
/// a thread of its own (``BusProcess/run(context:beforeForcedExit:_:)``: libzmq sockets are
/// confined to one thread), feeds each event and snapshot to a ``CueHandler``, logs the gaps
/// and malformed messages, says `connected` once the bus's health reports come through (its
/// subscription is then in place), and publishes the process's health on `health/<name>/`
/// about once a second: the handler's counters with `events` (received), `gaps` (messages
/// missed) and `malformed`. Stops on SIGINT or SIGTERM, lets the handler finish, and sends a
/// last report.
struct CueConsumer {
    /// What is followed.
    var target: CueTarget
    /// The role on `health/` (`voice`, `haptic`).
    var role: String
    /// The process name on `health/<name>/`.
    var name: String
    /// The bus.
    var bus: BusAddress
    /// Whether the bus is TCP without keys (`insecure: 1` in every report).
    var insecure = false

    /// The loop's own counters.
    struct Counters {
        var events = 0
        var malformed = 0
        var missed: UInt64 = 0

        var values: [String: Int] {
            ["events": events, "malformed": malformed, "gaps": Int(clamping: missed)]
        }
    }

    /// What the target names in the log: `camera cam0`, `session cam0/left`, `sessions
    /// cam0/left and cam0/right`.
    var what: String { target.description }

    /// Runs until SIGINT or SIGTERM.
    /// - Parameter makeHandler: Makes the handler on the bus thread (a failure ends the command).
    func run(
        context: CommandContext, makeHandler: @escaping @Sendable (Logger) throws -> any CueHandler
    ) async throws {
        let consumer = self
        let topics = try target.topics()
        try await BusProcess.run(context: context) { stop in
            try consumer.consume(topics: topics, stop: stop, log: context.logger, makeHandler: makeHandler)
        }
    }

    private func consume(
        topics: [TopicPrefix], stop: StopToken, log: Logger, makeHandler: (Logger) throws -> any CueHandler
    ) throws {
        let handler = try makeHandler(log)
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let publisher = try BusPublisher(context: zmq, bus: bus, linger: .seconds(1))
        defer { publisher.close() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus, prefixes: topics)
        defer { subscriber.close() }
        var health = try BusProcess.healthPublisher(process: name, role: role, insecure: insecure, log: log)
        var counters = Counters()
        var connected = false
        // Every gap and malformed message is counted; the first ten of a reason are logged, then
        // every thousandth (a hostile sender can make each message one).
        var warnings = WarningThrottle()
        func report() -> [String: Int] {
            handler.counters.merging(counters.values) { own, _ in own }
        }

        func handle(_ delivery: BusSubscriber.Delivery) throws {
            for message in BusMessage.messages(from: delivery) {
                switch message {
                case .event(let event):
                    counters.events += 1
                    try handler.receive(event)
                case .snapshot(let snapshot):
                    try handler.receive(snapshot)
                case .gap(let gap):
                    switch gap {
                    case .missed(_, let count, _): counters.missed.addSaturating(count)
                    case .overflow(let dropped): counters.missed.addSaturating(UInt64(max(0, dropped)))
                    case .senderRestarted(let topic, _):
                        if handler.senderRestarted(topic) { continue }
                    }
                    if let line = warnings.admit("gap", "gap: \(gap)") { log.warning(line) }
                case .malformed(let bad):
                    counters.malformed += 1
                    if let line = warnings.admit("malformed", "malformed message: \(bad)") {
                        log.warning(line)
                    }
                case .health:
                    if !connected {
                        connected = true
                        log.info("connected: the bus's health reports come through")
                    }
                case .pose, .analytics:
                    break
                }
            }
        }

        while !stop.isRequested {
            health.publishIfDue(counters: report, via: publisher)
            handler.idle()
            guard let delivery = try subscriber.receive(timeout: .milliseconds(100)) else { continue }
            try handle(delivery)
            while !stop.isRequested, let next = try subscriber.tryReceive() { try handle(next) }
        }
        try handler.finish()
        health.publish(counters: report(), via: publisher)
    }

    /// Reads a data file a therapist may edit (`--texts`, `--mapping`), or the built-in one.
    /// - Parameters:
    ///   - path: The file given, or `nil` for the built-in one.
    ///   - what: What it is, for the message when it cannot be read (`texts`, `mapping`).
    ///   - builtIn: The built-in value.
    ///   - parse: Parses the file's bytes; `source` names the file in its errors.
    /// - Throws: ``CLIError/failure(_:)`` naming the file and what is wrong in it.
    static func loadDataFile<Value>(
        _ path: String?, what: String, builtIn: () throws -> Value,
        parse: (_ bytes: [UInt8], _ source: String) throws -> Value
    ) throws(CLIError) -> Value {
        do {
            guard let path else { return try builtIn() }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError.failure("cannot read the \(what) file \(path)")
            }
            return try parse(Array(data), path)
        } catch let error as CLIError {
            throw error
        } catch {
            // The files' errors (VoiceTextsError, HapticMappingError) describe themselves.
            throw CLIError.failure("\(error)")
        }
    }
}

/// The options every cue consumer takes: what it follows (`--camera`, `--session`), the bus,
/// its name on `health/`, and the bus's security.
struct CueConsumerOptions: Hashable, Sendable {
    /// `--camera`.
    var camera = ""
    /// `--session`, repeated.
    var sessions: [String] = []
    /// `--bus`.
    var bus: String?
    /// `--name`.
    var name: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()

    /// What is followed.
    var target: CueTarget { CueTarget(camera: camera, sessions: sessions) }

    /// `--camera` and `--session`.
    /// - Parameter done: What the consumer does with the events (`spoken`, `played`).
    static func targetArguments<Command>(
        _ keyPath: WritableKeyPath<Command, CueConsumerOptions>, done: String
    )
        -> [Argument<Command>]
    {
        [
            .option(
                "camera", keyPath.appending(path: \.camera), valueName: "id",
                help: "The camera whose events are \(done)."),
            .option(
                "session", keyPath.appending(path: \.sessions), valueName: "name",
                help: "Only this session's events; repeat for several (default: every session of the camera)."
            ),
        ]
    }

    /// `--bus`, `--name` and the security options.
    /// - Parameter role: The default name's prefix (`voice`: `voice-<pid>`).
    static func busArguments<Command>(_ keyPath: WritableKeyPath<Command, CueConsumerOptions>, role: String)
        -> [Argument<Command>]
    {
        [
            BusProcess.busArgument(keyPath.appending(path: \.bus)),
            BusProcess.nameArgument(keyPath.appending(path: \.name), example: "\(role)-<pid>"),
        ] + BusSecurityOptions.clientArguments(keyPath.appending(path: \.security))
    }

    /// The consumer of these options: the bus resolved (with its keys), the name given or
    /// `$KINESIA_PROCESS_NAME` or `ROLE-<pid>`.
    /// - Throws: ``CLIError`` for a bad bus, name or key.
    func consumer(role: String, context: CommandContext) throws(CLIError) -> CueConsumer {
        let (bus, insecure) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment, fallback: BusProcess.derivedName(role, "\(getpid())"))
        return CueConsumer(target: target, role: role, name: name, bus: bus, insecure: insecure)
    }
}
