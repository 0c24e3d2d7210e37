import KinesiaBus
public import KinesiaClient
import KinesiaControl
public import KinesiaService
import KinesiaSystem
import KinesiaWire
import Synchronization

/// The web gateway (`kinesia web`): follows the bus's snapshots, runs and health reports live
/// into a ``WebModel`` and answers HTTP requests from it (``WebAPI``) on an ``HTTPServer``.
///
/// Tokens are read from their directory at start and again every second (a revoked token is
/// refused within a second). A session's server-sent events are streamed on their
/// connection's thread, each client with its own exactly-once subscriber
/// (``SessionEventStream``), at most ``Configuration/maximumEventStreams`` at once. Its counters
/// go on `health/<name>/` every second: `served`, `unauthorized`, `notFound`,
/// `methodNotAllowed`, `badRequest`, `forbidden`, `connections` and `eventStreams` (open now),
/// `eventStreamsOpened`, `eventStreamsRefused`, `commands`, the server's own
/// (``HTTPServer/counters``: `connectionsOpened`, `connectionsUnanswered`, `requestsCutShort`,
/// `bodiesTooLarge`), and the bus messages `received` and `malformed`.
///
/// ```swift
/// let service = WebService(configuration, log: log)
/// try await ServiceRunner(logger: log).run(BlockingService { stop in try service.run(until: stop) })
/// ```
public struct WebService: Sendable {
    /// What a gateway is given to run.
    public struct Configuration: Sendable {
        /// The bus, the process name and whether the bus is insecure.
        public var process: BusProcessIdentity
        /// The IPv4 address to listen on.
        public var host: String
        /// The port (0: any free port; ``run(until:listening:)`` tells which).
        public var port: UInt16
        /// The tokens' directory.
        public var tokens: String
        /// What a client may take.
        public var limits: HTTPServer.Limits
        /// Server-sent event streams open at once, at most (more are answered 503).
        public var maximumEventStreams: Int
        /// `kinesia record`'s database, for the runs and their reports (`nil`: none).
        public var database: String?
        /// The certificate and key to speak TLS with (`nil`: plain HTTP, loopback only).
        public var tls: HTTPServer.TLS?

        /// A configuration.
        public init(
            process: BusProcessIdentity, host: String, port: UInt16, tokens: String,
            limits: HTTPServer.Limits = HTTPServer.Limits(), maximumEventStreams: Int = 200,
            database: String? = nil, tls: HTTPServer.TLS? = nil
        ) {
            self.process = process
            self.host = host
            self.port = port
            self.tokens = tokens
            self.limits = limits
            self.maximumEventStreams = maximumEventStreams
            self.database = database
            self.tls = tls
        }
    }

    /// What it runs with.
    public let configuration: Configuration
    private let log: Logger
    private let startClock: @Sendable () -> ElapsedClock

    /// A gateway that logs on `log` and times its model on `clock`.
    public init(_ configuration: Configuration, log: Logger, clock: some Clock<Duration> = ContinuousClock())
    {
        self.configuration = configuration
        self.log = log
        startClock = { ElapsedClock(clock) }
    }

    /// `camera/name` of a session's snapshot or run record.
    static func sessionKey(of message: BusMessage) -> String? {
        switch message {
        case .snapshot(let snapshot):
            guard let camera = snapshot.topic.camera, let name = snapshot.topic.session else { return nil }
            return "\(camera)/\(name)"
        case .run(let run): return "\(run.record.key.camera)/\(run.record.key.name)"
        default: return nil
        }
    }

    /// One client of the live state: where it stands in the hub.
    private final class LiveClient: @unchecked Sendable {
        let hub: LiveHub
        /// The gateway's clock, that the waits are timed on.
        let elapsed: ElapsedClock
        var seen: UInt64 = 0
        init(hub: LiveHub, clock elapsed: ElapsedClock) {
            self.hub = hub
            self.elapsed = elapsed
        }

        /// The changes since the client's last read (a comment after 15 s of the gateway's clock
        /// without any); `nil` once the gateway stops.
        func next() -> [UInt8]? {
            guard let changes = hub.changes(after: seen, timeout: .seconds(15), clock: elapsed) else {
                return nil
            }
            seen = changes.seen
            return Array((changes.texts.isEmpty ? ": still here\n\n" : changes.texts.joined()).utf8)
        }
    }

    /// What the server's thread and the bus loop share.
    private struct Shared: Sendable {
        var model = WebModel()
        var tokens: WebTokens.Snapshot
        var outcomes: [WebAPI.Outcome: Int] = [:]
        /// Event streams open now, opened in all, and refused for their number.
        var eventStreams = 0
        var eventStreamsOpened = 0
        var eventStreamsRefused = 0
        /// Event streams ended by a failure of the bus under them.
        var eventStreamsFailed = 0
        /// Commands the coordinator answered.
        var commands = 0
    }

    /// Serves until `stop` is requested; `listening` is told the port once requests are
    /// answered.
    ///
    /// - Throws: ``WebServiceError/tokens(_:)`` when the tokens' directory cannot be used,
    ///   ``WebServiceError/server(_:)`` when the server cannot listen,
    ///   ``WebServiceError/bus(_:_:)`` when the bus fails.
    public func run(until stop: StopToken, listening: @Sendable (UInt16) -> Void = { _ in })
        throws(WebServiceError)
    {
        // A connection and an event stream's sockets each take descriptors: hundreds of clients
        // need more than the usual soft limit of 1,024.
        let descriptors = FileDescriptorLimit.raiseToHardLimit()
        let tokens = try WebServiceError.catching(WebServiceError.tokens) { () throws(WebTokenError) in
            try WebTokens(directory: configuration.tokens)
        }
        let elapsed = startClock()
        let first = tokens.load()
        for problem in first.problems { log.warning(problem) }
        let shared = Mutex(Shared(tokens: first))
        func onBus<Value: ~Copyable>(_ body: () throws(ZMQError) -> Value) throws(WebServiceError) -> Value {
            try WebServiceError.catching(
                { (error: ZMQError) in .bus(configuration.process.bus.description, error) }, body)
        }
        let zmq = try onBus { () throws(ZMQError) in try ZMQContext() }
        defer { zmq.terminate() }
        let publisher = try onBus { () throws(ZMQError) in
            try BusPublisher(
                context: zmq, bus: configuration.process.bus, linger: .seconds(1),
                connectionTimeout: .seconds(2))
        }
        defer { publisher.close() }
        let subscriber = try onBus { () throws(ZMQError) in
            try BusSubscriber(
                context: zmq, bus: configuration.process.bus,
                prefixes: [.kind(.snapshot), .kind(.session), .kind(.health)])
        }
        defer { subscriber.close() }
        // Ends the event streams before the server waits for their threads (whatever ends the
        // loop: a stop, or an error).
        let streaming = StopToken()
        let live = LiveHub()
        let bus = configuration.process.bus
        let maximumStreams = configuration.maximumEventStreams
        let log = self.log
        let control = ControlClient(bus: bus)
        @Sendable func perform(_ call: ControlCall) -> HTTPResponse {
            do {
                let request = try ControlRequest(
                    id: call.requestID ?? ControlClient.newRequestID(), command: call.command)
                let answer = try control.send(request)
                log.info("\(request.verb) \(answer.outcome.rawValue): \(answer.message)")
                shared.withLock { $0.commands += 1 }
                return ControlCall.response(to: answer)
            } catch {
                log.warning("a command could not be sent: \(error)")
                return .problem(503, "coordinatorUnavailable", "\(error)")
            }
        }
        let archive = configuration.database.map(RunArchive.init(path:))
        @Sendable func archived(_ work: WebAPI.RunsWork, patient: String?) -> HTTPResponse {
            guard let archive else {
                return .problem(
                    404, "noDatabase", "kinesia web was started without --db (kinesia record's database)")
            }
            do {
                switch work {
                case .runs:
                    return .json(try archive.runsJSON(patient: patient))
                case .report(let run):
                    guard let html = try archive.report(run: run) else {
                        return .problem(404, "notFound", "run \(run) is not recorded")
                    }
                    return HTTPResponse(
                        status: 200, contentType: "text/html; charset=utf-8",
                        headers: [("Content-Security-Policy", WebAPI.reportPolicy)], body: Array(html.utf8))
                }
            } catch {
                log.warning("cannot read \(archive.path): \(error)")
                return .problem(503, "databaseUnreadable", "the record database cannot be read now")
            }
        }
        @Sendable func admitStream() -> Bool {
            shared.withLock { shared in
                guard shared.eventStreams < maximumStreams else {
                    shared.eventStreamsRefused += 1
                    return false
                }
                shared.eventStreams += 1
                shared.eventStreamsOpened += 1
                return true
            }
        }
        let server: HTTPServer
        do throws(HTTPServerError) {
            server = try HTTPServer(
                host: configuration.host, port: configuration.port, limits: configuration.limits,
                tls: configuration.tls
            ) {
                request in
                let now = elapsed.now
                var response = shared.withLock { shared in
                    let (response, outcome) = WebAPI.respond(
                        to: request, model: shared.model, tokens: shared.tokens, now: now)
                    shared.outcomes[outcome, default: 0] += 1
                    return response
                }
                // The runs and their reports: read from the record database on this thread.
                if response.status == 202, let work = WebAPI.runsWork(request.path) {
                    return archived(work, patient: request.query["patient"])
                }
                // A therapist's command: sent to the coordinator, its answer waited for on this thread.
                if response.status == 202, case .success(let call)? = ControlCall.parse(request) {
                    return perform(call)
                }
                // The live state: the head is answered, the changes follow on this thread.
                if response.status == 200, request.path == WebAPI.livePath {
                    guard admitStream() else {
                        return .problem(
                            503, "tooManyStreams",
                            "at most \(maximumStreams) event streams are served at once")
                    }
                    let client = LiveClient(hub: live, clock: elapsed)
                    response.stream = HTTPBodyStream(
                        next: { client.next() }, close: { shared.withLock { $0.eventStreams -= 1 } })
                    return response
                }
                // A session's events: the head is answered, the stream follows on this thread.
                guard response.status == 200, case .success(let events)? = EventStreamRequest.parse(request)
                else {
                    return response
                }
                guard admitStream() else {
                    return .problem(
                        503, "tooManyStreams", "at most \(maximumStreams) event streams are served at once")
                }
                do {
                    let stream = try SessionEventStream(events, context: zmq, bus: bus, stop: streaming) {
                        reason in
                        shared.withLock { $0.eventStreamsFailed += 1 }
                        log.warning(
                            "an event stream of \(events.camera)/\(events.name ?? "*") ended: \(reason)")
                    }
                    response.stream = HTTPBodyStream(
                        next: { stream.next() },
                        close: {
                            stream.close()
                            shared.withLock { $0.eventStreams -= 1 }
                        })
                    return response
                } catch {
                    shared.withLock { $0.eventStreams -= 1 }
                    log.error("cannot follow \(events.camera)/\(events.name ?? "*") for a client: \(error)")
                    return .problem(503, "busUnavailable", "the bus cannot be followed now")
                }
            }
        } catch {
            throw .server(error)
        }
        defer { server.close() }
        defer {
            streaming.request()
            live.close()
        }
        var health = try WebServiceError.catching(WebServiceError.processName) { () throws(TopicError) in
            try configuration.process.healthPublisher(role: "web", problems: { log.warning($0) })
        }
        var received = 0
        var malformed = 0
        func counters() -> [String: Int] {
            var values = shared.withLock { shared in
                Dictionary(
                    uniqueKeysWithValues: WebAPI.Outcome.allCases.map {
                        ($0.rawValue, shared.outcomes[$0] ?? 0)
                    })
            }
            shared.withLock { shared in
                values["eventStreams"] = shared.eventStreams
                values["eventStreamsOpened"] = shared.eventStreamsOpened
                values["eventStreamsRefused"] = shared.eventStreamsRefused
                values["eventStreamsFailed"] = shared.eventStreamsFailed
                values["commands"] = shared.commands
            }
            values.merge(server.counters) { own, _ in own }
            values["connections"] = server.connections
            values["received"] = received
            values["malformed"] = malformed
            return values
        }
        log.info(
            "serving \(configuration.tls == nil ? "http" : "https")://\(configuration.host):\(server.port)/ "
                + "(tokens in \(configuration.tokens); \(descriptors) descriptors)")
        listening(server.port)
        var tokensRead = elapsed.now
        var processesPublished = Duration.zero
        while !stop.isRequested {
            health.publishIfDue(counters: counters, via: publisher)
            if elapsed.now - tokensRead >= .seconds(1) {
                tokensRead = elapsed.now
                let reread = tokens.load()
                shared.withLock { $0.tokens = reread }
            }
            let delivery = try onBus { () throws(ZMQError) in
                try subscriber.receive(timeout: .milliseconds(100))
            }
            let now = elapsed.now
            for message in delivery.map(BusMessage.messages(from:)) ?? [] {
                if case .malformed = message { malformed += 1 } else { received += 1 }
                let json = shared.withLock { shared -> String? in
                    shared.model.apply(message, now: now)
                    guard let key = WebService.sessionKey(of: message) else { return nil }
                    return shared.model.sessionJSON(key, now: now)
                }
                if let json, let key = WebService.sessionKey(of: message) {
                    live.publish("session " + key, text: "event: session\ndata: \(json)\n\n")
                }
            }
            if now - processesPublished >= .seconds(1) {
                processesPublished = now
                let json = shared.withLock { $0.model.processesJSON(now: now) }
                live.publish("processes", text: "event: processes\ndata: \(json)\n\n")
            }
        }
        health.publish(counters: counters(), via: publisher)
        log.info(
            "stopped: \(counters().sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        )
    }
}
