public import KinesiaBus
import KinesiaSystem
public import KinesiaWire

/// Answers replay requests on a ROUTER socket from a ``ReplaySource`` (see
/// ``ReplayResponder`` for the answers, `docs/wire-format.md` for the frames).
///
/// Flow control is the client's credit: each request asks for at most
/// ``ReplayFormat/maximumBatch`` entries and the server sends nothing it was not asked for, so
/// what waits for one client is bounded by the requests it has outstanding. The ROUTER is
/// `ZMQ_ROUTER_MANDATORY`: a reply that does not fit in a client's queue (a client that asked
/// for more than it reads) is refused at once, the rest of that batch is dropped and counted
/// (`replayDropped`), and the client asks again after its timeout. The server never blocks and
/// never queues without bound. Request frames larger than ``WireFormat/maximumFrameSize`` are
/// refused by libzmq (`ZMQ_MAXMSGSIZE`), like on every receiving socket.
///
/// Memory is bounded by the clients connected and served: at most
/// ``ReplayConnections/maximumConnections`` connections open at once (one more is refused at
/// its handshake by the server's ``ReplayGate``, counted as `replayConnectionsRefused`, and a
/// refused libzmq client does not come back: libzmq spends about 40 KiB on each connection's
/// pipes and buffers, requests or not), at most
/// ``ReplayAdmission/maximumClients`` peers answered at once (a request from one more is refused, counted as `replayRefused`; each peer is
/// forgotten after ``ReplayAdmission/idleTimeout`` without a request), at most
/// ``highWaterMark`` messages queued for each (`ZMQ_SNDHWM`), 2 messages received from each
/// (`ZMQ_RCVHWM`: one request frame at a time is all a client needs), frames of at most
/// ``WireFormat/maximumFrameSize`` (`ZMQ_MAXMSGSIZE`), and a ZMTP handshake that must finish
/// within 5 s (`ZMQ_HANDSHAKE_IVL`). The heap freed by many connections that left is given back
/// to the system (``FreedMemory``, `malloc_trim`), which glibc would otherwise keep.
///
/// The server has a context of its own (``context``), because its gate is that context's ZAP
/// handler; its connections are admitted on the gate's thread, never on the caller's.
///
/// Not `Sendable`: poll ``socket`` and call ``serve(from:budget:)`` on one thread, the thread
/// that appends to the source.
///
/// ```swift
/// let server = try ReplayServer(endpoint: ReplayServer.endpoint(bus: bus, process: name))
/// _ = try server.serve(from: source)   // whenever server.socket is readable
/// ```
public final class ReplayServer {
    /// The send high-water mark per client: four full batches.
    public static let highWaterMark: Int32 = 4 * (Int32(ReplayFormat.maximumBatch) + 1)

    /// The server's own context (its ROUTER's and its gate's). An `inproc://` client connects
    /// in it.
    public let context: ZMQContext
    /// The ROUTER socket (for a ``Poller``).
    public let socket: ZMQSocket
    /// The endpoint bound, as clients connect to it (the port chosen for a `tcp://...:*`).
    public let endpoint: String
    /// Requests by outcome (`served`, `malformedRequest`, `unknownStream`, `notRetained`...),
    /// entries sent, replies dropped at a full client queue, and the connections open and
    /// refused (`replayConnections`, `replayConnectionsRefused`).
    public var counters: [String: Int] {
        let gate = gate.counts
        var values = requestCounters
        values["replayConnections"] = gate.open
        values["replayConnectionsRefused"] = gate.refused
        if gate.acceptFailures > 0 { values["replayAcceptFailures"] = gate.acceptFailures }
        if gate.memoryReturns > 0 { values["replayMemoryReturns"] = gate.memoryReturns }
        return values
    }
    private var requestCounters: [String: Int] = ["replayClients": 0]

    private var frames: [[UInt8]] = []
    /// Which clients are answered.
    public private(set) var admission: ReplayAdmission
    /// Which connections are admitted, on a thread of its own.
    private let gate: ReplayGate
    /// The admission's time (idle clients forgotten), on the clock given.
    private let elapsed: ElapsedClock

    /// Binds a ROUTER at `endpoint`, in a context of its own.
    /// - Parameters:
    ///   - endpoint: Where to bind.
    ///   - admission: Which clients are answered (how many at once, how long an idle one is kept).
    ///   - connections: How many connections are kept open at once.
    ///   - clock: What idle clients, and the return of the heap freed by connections that left
    ///     (``ReplayConnections``), are timed on (a ``ManualClock`` in tests).
    /// - Throws: ``ZMQError``.
    public init(
        endpoint: String, admission: ReplayAdmission = ReplayAdmission(),
        connections: ReplayConnections = ReplayConnections(), clock: some Clock<Duration> = ContinuousClock()
    ) throws(ZMQError) {
        self.admission = admission
        elapsed = ElapsedClock(clock)
        let context = try ZMQContext()
        self.context = context
        let socket: ZMQSocket
        do throws(ZMQError) {
            // Replies not sent at close are asked for again by their clients.
            socket = try ZMQSocket(.router, context: context, linger: .zero)
        } catch {
            context.terminate()
            throw error
        }
        let gate: ReplayGate
        do throws(ZMQError) {
            // Before the bind, so that no connection is accepted unseen.
            let events = try socket.publishEvents([
                .accepted, .disconnected, .acceptFailed, .handshakeSucceeded, .handshakeFailed,
            ])
            try socket.set(.zapDomain, ReplayGate.domain)
            gate = try ReplayGate(context: context, events: events, connections: connections, clock: elapsed)
        } catch {
            socket.close()
            context.terminate()
            throw error
        }
        self.socket = socket
        self.gate = gate
        try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
        try socket.set(.sendHighWaterMark, Self.highWaterMark)
        try socket.set(.receiveHighWaterMark, 2)
        try socket.set(.handshakeInterval, .seconds(5))
        try socket.set(.routerMandatory, true)
        var bound = try socket.bind(endpoint)
        if bound.hasPrefix("tcp://0.0.0.0:"), let host = Self.hostName() {
            bound = "tcp://\(host):" + bound.dropFirst("tcp://0.0.0.0:".count)
        }
        self.endpoint = bound
    }

    deinit {
        close()
    }

    /// Where a process named `process` serves replay on `bus`: `ipc://DIR/replay/<process>.sock`
    /// in a bus directory (the `replay` directory is made owner-only, 0700), or a port the
    /// system chooses on the broker's host over a TCP bus run `--insecure` (`tcp://127.0.0.1:*`
    /// for a local broker, every interface otherwise, announced with this host's name).
    ///
    /// `nil` on a TCP bus with CURVE keys: a replay endpoint of its own would be outside the
    /// broker's authentication and encryption, so replay goes through the broker's replay port
    /// there (``BrokerReplayLink``, `docs/threat-model.md`).
    /// - Throws: ``BusAddressError/directoryUnusable(_:reason:)`` when the directory cannot be
    ///   made private.
    public static func endpoint(bus: BusAddress, process: String) throws(BusAddressError) -> String? {
        guard servesReplay(on: bus) else { return nil }
        switch bus.kind {
        case .directory(let path):
            let directory = path + "/replay"
            do {
                let opened = try PrivateDirectory.open(directory, creating: true)
                opened.close()
            } catch {
                throw .directoryUnusable(directory, reason: error.description)
            }
            return "ipc://\(directory)/\(process).sock"
        case .tcp(let host, _):
            let local = host == "127.0.0.1" || host == "localhost" || host == "::1"
            return local ? "tcp://\(host == "::1" ? "[::1]" : "127.0.0.1"):*" : "tcp://0.0.0.0:*"
        }
    }

    /// Whether replay is served on an endpoint of the process's own on `bus`: on an IPC bus and a
    /// TCP bus run `--insecure`, not on a TCP bus with CURVE keys, where it goes through the
    /// broker (see ``endpoint(bus:process:)``, ``ReplayDealer/asksForReplay(on:)``).
    public static func servesReplay(on bus: BusAddress) -> Bool { bus.credentials == nil }

    /// Answers the requests waiting now (at most `budget` of them, so that a flood of requests
    /// does not starve the caller's other work).
    /// - Returns: The requests answered.
    /// - Throws: ``ZMQError`` when the socket fails (not when a client is gone or full).
    @discardableResult
    public func serve(from source: some ReplaySource, budget: Int = 16) throws(ZMQError) -> Int {
        var handled = 0
        // Called on every turn of a publisher's loop: with no client answered, nothing expires
        // and the clock is not read until a request comes.
        var read: Duration?
        if admission.clients > 0 {
            let now = elapsed.now
            admission.expire(now: now)
            requestCounters["replayClients"] = admission.clients
            read = now
        }
        while handled < budget, try socket.tryReceive(into: &frames) {
            handled += 1
            let now = read ?? elapsed.now
            read = now
            guard frames.count >= 1, admission.admit(frames[0], now: now) else {
                requestCounters["replayRefused"] = admission.refused
                continue
            }
            requestCounters["replayClients"] = admission.clients
            // A DEALER's message arrives as [identity, request]; anything else is not a request.
            guard frames.count == 2 else {
                count("malformedRequest")
                if frames.count >= 1 {
                    let failure = ReplayFailure(
                        requestID: 0, code: .malformedRequest, stream: StreamID(0), first: 0, last: 0,
                        message: "a request is one frame, got \(frames.count - 1)")
                    _ = try send([frames[0]] + ReplayReply.error(failure).frames())
                }
                continue
            }
            let identity = frames[0]
            let (replies, outcome) = ReplayResponder.answer(frames[1], from: source)
            count(outcome)
            for (index, reply) in replies.enumerated() {
                guard try send([identity] + reply.frames()) else {
                    requestCounters["replayDropped", default: 0] += replies.count - index
                    break
                }
                if case .entry = reply { requestCounters["replayEntries", default: 0] += 1 }
            }
        }
        return handled
    }

    /// Closes the socket and the context (the ROUTER's monitoring and the gate first: nothing
    /// is sent to the gate's monitor reader after it is gone). Safe more than once.
    public func close() {
        if !socket.isClosed { try? socket.stopMonitoring() }
        gate.stop()
        socket.close()
        context.terminate()
    }

    private func count(_ outcome: String) {
        requestCounters["replay." + outcome, default: 0] += 1
    }

    /// Sends without waiting; `false` when the client's queue is full or the client is gone.
    private func send(_ message: [[UInt8]]) throws(ZMQError) -> Bool {
        do {
            return try socket.trySend(message)
        } catch .hostUnreachable {
            return false
        }
    }

    private static func hostName() -> String? { ProcessIdentity.hostName }
}
