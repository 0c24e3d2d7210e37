public import KinesiaBus
import KinesiaJSON
import KinesiaMotion
import KinesiaSystem
public import KinesiaWire

/// Receives the messages of some topics exactly once and in order per stream, on the caller's
/// thread: a ``BusSubscriber`` for the live messages and the publishers' heartbeats
/// (`health/`), one DEALER per replay endpoint, and an ``ExactlyOnceStateMachine`` that
/// decides. ``ExactlyOnceMessages`` runs one on a thread of its own; `kinesia listen --from`
/// runs one in its loop.
///
/// Nothing is read while the caller does not call ``receive(timeout:)``: a slow caller lets
/// its subscriber's queue fill (the broker then drops live messages for it alone) and gets
/// them back by replay, one batch at a time.
///
/// Replay DEALERs are bounded and reclaimed: at most ``maximumEndpoints`` are open at once (a
/// new endpoint beyond that closes the least recently used one), and one unused for
/// ``idleEndpointTimeout`` is closed (a restarted publisher is a new endpoint each time, so a
/// long-running consumer would otherwise keep every old one). A request to a closed endpoint is
/// simply sent again after the machine's timeout, on a new DEALER. A DEALER that got no reply
/// for ``unansweredEndpointTimeout`` while it had requests out is closed and opened again
/// (counted as `replayEndpointsReopened`): a server at its connection cap refuses the
/// handshake, and libzmq does not retry a refused handshake on the same socket. An endpoint that cannot be
/// used (not `ipc://` or `tcp://`, a failed connect) is said: counted in ``counters``
/// (`replayEndpointFailures`), told once per endpoint to `problems`, and the request's hole is
/// handed on as ``Delivery/lost(topic:sequences:)`` instead of being asked for again for ever.
///
/// Not `Sendable`: use it on the thread that made it.
///
/// ```swift
/// let subscriber = try ExactlyOnceSubscriber(context: context, bus: bus, topics: [.kind(.event)], from: .beginning)
/// while let delivery = try subscriber.receive(timeout: .milliseconds(100)) {
///     if case .message(let message) = delivery { print(message.topic, message.header.sequence) }
/// }
/// ```
public final class ExactlyOnceSubscriber {
    /// The most replay endpoints one subscriber is connected to at once (by default).
    public static let maximumEndpoints = 64
    /// How long an endpoint no request or reply used stays connected (by default).
    public static let idleEndpointTimeout: Duration = .seconds(60)
    /// How long a DEALER with requests out and no reply is kept before it connects again.
    public static let unansweredEndpointTimeout: Duration = .seconds(5)

    /// What one receive produced.
    public enum Delivery {
        /// The next message of its stream (never twice, never out of order within the stream).
        case message(WireMessage)
        /// A health report (only when the topics followed include it).
        case health(WireMessage)
        /// Sequence numbers of `topic` that cannot be had: not retained any more, or their
        /// publisher serves no replay.
        case lost(topic: Topic, sequences: Range<UInt64>)
        /// A live message that did not decode.
        case malformed(topic: String, reason: BusDecodeFailure)
    }

    /// The decisions (its counters and cursor).
    public private(set) var machine: ExactlyOnceStateMachine<WireMessage>
    /// Replies that did not read as the replay protocol, or replayed messages that did not
    /// match their entry.
    public private(set) var malformedReplies = 0

    private let subscriber: BusSubscriber
    private let context: ZMQContext
    private let topics: [TopicPrefix]
    private let wantsHealth: Bool
    private let asksForReplay: Bool
    private let bus: BusAddress
    private struct Dealer {
        var socket: ZMQSocket
        var lastUsed: Duration
        /// The first request sent since the last reply (`nil`: none out).
        var unansweredSince: Duration?
    }

    private var dealers: [String: Dealer] = [:]
    private let endpointLimit: Int
    private let idleTimeout: Duration
    private let problems: (@Sendable (String) -> Void)?
    private var failedEndpoints: Set<String> = []
    private var lastReclaim: Duration = .zero
    /// The subscriber's own counters (the machine's are in ``machine``): `replayEndpointsOpened`,
    /// `replayEndpointsEvicted` (closed for a newer one at the limit), `replayEndpointsIdle`
    /// (closed unused), `replayEndpointFailures`.
    public private(set) var counters: [String: Int] = [:]
    private var ready: [Delivery] = []
    private var readIndex = 0
    private var frames: [[UInt8]] = []
    /// The I/O waits' clock (``receive(timeout:)``).
    private let clock = ContinuousClock()
    /// The decisions' time (the replay timeouts, idle endpoints), on the clock given.
    private let elapsed: ElapsedClock

    /// Connects to the bus and follows `topics`.
    /// - Parameters:
    ///   - context: The context of the sockets.
    ///   - bus: The bus.
    ///   - topics: The prefixes followed.
    ///   - from: Where streams without a cursor position start.
    ///   - cursor: Positions to resume from.
    ///   - maximumBuffered: The most live messages held per stream while a hole is filled.
    ///   - highWaterMark: The subscriber's receive high-water mark.
    ///   - maximumEndpoints: The most replay endpoints connected at once (at least 1).
    ///   - idleEndpointTimeout: An endpoint unused this long is disconnected.
    ///   - problems: Told once per replay endpoint that cannot be used (a command logs it).
    ///   - clock: What the replay timeouts and idle endpoints are timed on (a ``ManualClock``
    ///     in tests); ``receive(timeout:)`` waits on the real clock whatever it is.
    /// - Throws: ``ZMQError``.
    public init(
        context: ZMQContext, bus: BusAddress, topics: [TopicPrefix], from start: ReplayStart,
        cursor: ReplayCursor = ReplayCursor(), maximumBuffered: Int = 4096,
        highWaterMark: Int32 = BusSubscriber.defaultHighWaterMark,
        maximumEndpoints: Int = ExactlyOnceSubscriber.maximumEndpoints,
        idleEndpointTimeout: Duration = ExactlyOnceSubscriber.idleEndpointTimeout,
        problems: (@Sendable (String) -> Void)? = nil, clock: some Clock<Duration> = ContinuousClock()
    ) throws(ZMQError) {
        elapsed = ElapsedClock(clock)
        self.context = context
        endpointLimit = Swift.max(1, maximumEndpoints)
        idleTimeout = idleEndpointTimeout
        self.problems = problems
        self.topics = topics
        asksForReplay = ReplayDealer.asksForReplay(on: bus)
        self.bus = bus
        wantsHealth = topics.contains { $0.matches(topicFrame: Array("health/x/".utf8)) }
        subscriber = try BusSubscriber(
            context: context, bus: bus, prefixes: topics + [.kind(.health)], highWaterMark: highWaterMark)
        _ = try subscriber.waitForConnection(timeout: .zero)
        machine = ExactlyOnceStateMachine(
            start: start, cursor: cursor, accepts: topics, maximumBuffered: maximumBuffered)
    }

    /// The positions of what was delivered.
    public var cursor: ReplayCursor { machine.cursor }

    /// The replay endpoints connected now.
    public var connectedEndpoints: Set<String> { Set(dealers.keys) }

    /// Closes every socket.
    public func close() {
        subscriber.close()
        for dealer in dealers.values { dealer.socket.close() }
        dealers = [:]
    }

    /// The next delivery, waiting at most `timeout`.
    /// - Returns: `nil` when nothing came in time.
    /// - Throws: ``ZMQError`` (``ZMQError/terminated`` when the context shuts down).
    public func receive(timeout: Duration) throws(ZMQError) -> Delivery? {
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let next = takeReady() { return next }
            var poller = Poller()
            poller.add(subscriber.socket, for: .readable)
            let endpoints = Array(dealers.keys)
            for endpoint in endpoints { poller.add(dealers[endpoint]!.socket, for: .readable) }
            let remaining = clock.now.duration(to: deadline)
            _ = try poller.poll(timeout: Swift.max(.zero, Swift.min(remaining, .milliseconds(100))))
            // Replies first: they fill the holes that live messages wait behind.
            for endpoint in endpoints {
                guard let dealer = dealers[endpoint]?.socket else { continue }
                var budget = 512
                while budget > 0, try dealer.tryReceive(into: &frames) {
                    budget -= 1
                    dealers[endpoint]?.lastUsed = now()
                    dealers[endpoint]?.unansweredSince = nil
                    try replayed(frames)
                }
            }
            reclaimIdleDealers()
            var budget = 512
            while budget > 0, let delivery = try subscriber.tryReceive() {
                budget -= 1
                try live(delivery)
            }
            try perform(machine.tick(now: now()))
            if let next = takeReady() { return next }
            if remaining <= .zero { return nil }
        }
    }

    private func takeReady() -> Delivery? {
        guard readIndex < ready.count else { return nil }
        defer {
            readIndex += 1
            if readIndex == ready.count {
                ready.removeAll(keepingCapacity: true)
                readIndex = 0
            }
        }
        return ready[readIndex]
    }

    private func now() -> Duration { elapsed.now }

    private func perform(_ actions: [ExactlyOnceStateMachine<WireMessage>.Action]) throws(ZMQError) {
        for action in actions {
            switch action {
            case .deliver(_, _, let message):
                ready.append(.message(message))
            case .lost(let key, let sequences):
                ready.append(.lost(topic: key.topic, sequences: sequences))
            case .request(let endpoint, let request):
                guard let dealer = try dealer(for: endpoint) else {
                    // Said, and not asked for again for ever: what it would fetch is lost.
                    let failure = ReplayFailure(
                        requestID: request.requestID, code: .unknownStream,
                        stream: request.stream ?? StreamID(0),
                        first: 0, last: 0, message: "replay endpoint \(endpoint) cannot be used")
                    try perform(machine.replayFailed(failure, now: now()))
                    continue
                }
                // A request that cannot be queued now is sent again after the machine's timeout.
                _ = try? dealer.trySend([request.encoded()])
            }
        }
    }

    private func dealer(for endpoint: String) throws(ZMQError) -> ZMQSocket? {
        let time = now()
        if let existing = dealers[endpoint] {
            guard let since = existing.unansweredSince, time - since >= Self.unansweredEndpointTimeout else {
                dealers[endpoint]?.lastUsed = time
                if existing.unansweredSince == nil { dealers[endpoint]?.unansweredSince = time }
                return existing.socket
            }
            // Refused at its handshake (a server at its cap), or stuck: a new connection.
            existing.socket.close()
            dealers[endpoint] = nil
            counters["replayEndpointsReopened", default: 0] += 1
        }
        // Never in clear text beside a CURVE bus, whatever a heartbeat announces: there every
        // request goes through the broker's replay port (``ReplayDealer/open(_:context:bus:)``).
        guard asksForReplay, ReplayDealer.isReplayEndpoint(endpoint) else {
            failed(endpoint, "it is not an ipc:// or tcp:// endpoint")
            return nil
        }
        if dealers.count >= endpointLimit,
            let oldest = dealers.min(by: { ($0.value.lastUsed, $0.key) < ($1.value.lastUsed, $1.key) })
        {
            oldest.value.socket.close()
            dealers[oldest.key] = nil
            counters["replayEndpointsEvicted", default: 0] += 1
        }
        let socket: ZMQSocket
        do {
            socket = try ReplayDealer.open(endpoint, context: context, bus: bus)
        } catch {
            failed(endpoint, "connecting failed: \(error)")
            return nil
        }
        dealers[endpoint] = Dealer(socket: socket, lastUsed: time, unansweredSince: time)
        counters["replayEndpointsOpened", default: 0] += 1
        return socket
    }

    /// Closes the DEALERs no request or reply used for ``idleEndpointTimeout`` (looked at
    /// about once a second).
    private func reclaimIdleDealers() {
        let time = now()
        guard time - lastReclaim >= .seconds(1) else { return }
        lastReclaim = time
        for (endpoint, dealer) in dealers where time - dealer.lastUsed >= idleTimeout {
            dealer.socket.close()
            dealers[endpoint] = nil
            counters["replayEndpointsIdle", default: 0] += 1
        }
    }

    private func failed(_ endpoint: String, _ reason: String) {
        counters["replayEndpointFailures", default: 0] += 1
        guard failedEndpoints.count < 1024, failedEndpoints.insert(endpoint).inserted else { return }
        problems?(
            "replay endpoint \(endpoint.quotedExcerpt(limit: 200)) cannot be used (\(reason)): what it would "
                + "replay is reported lost; counted in replayEndpointFailures")
    }

    private func live(_ delivery: BusSubscriber.Delivery) throws(ZMQError) {
        switch delivery {
        case .malformed(let topic, let reason):
            ready.append(.malformed(topic: topic, reason: reason))
        case .flatPose:
            return
        case .message(let message, _):
            if case .health(let report) = message.body {
                // On a CURVE bus, the endpoint a heartbeat announces is never connected to:
                // requests go through the broker's replay port.
                if let announcement = report.replay, asksForReplay {
                    try perform(machine.announced(announcement, now: now()))
                }
                if !report.moving.isEmpty, asksForReplay { machine.moving(report.moving, now: now()) }
                if wantsHealth { ready.append(.health(message)) }
                return
            }
            guard topics.contains(where: { $0.matches(message.topic) }) else { return }
            let key = ReplayStreamKey(topic: message.topic, stream: message.header.streamID)
            try perform(
                machine.received(
                    key, sequence: message.header.sequence, message: message, live: true, now: now()))
        }
    }

    private func replayed(_ frames: [[UInt8]]) throws(ZMQError) {
        guard let reply = try? ReplayReply.decode(frames) else {
            malformedReplies += 1
            return
        }
        switch reply {
        case .entry(let entry):
            guard entry.frames.count == 2,
                let message = try? WireMessage.decode(topic: entry.frames[0], payload: entry.frames[1]),
                message.header.streamID == entry.stream, message.header.sequence == entry.sequence
            else {
                malformedReplies += 1
                return
            }
            let key = ReplayStreamKey(topic: message.topic, stream: entry.stream)
            try perform(
                machine.received(key, sequence: entry.sequence, message: message, live: false, now: now()))
        case .end(let end):
            try perform(machine.replayEnded(end, now: now()))
        case .error(let failure):
            try perform(machine.replayFailed(failure, now: now()))
        }
    }
}
