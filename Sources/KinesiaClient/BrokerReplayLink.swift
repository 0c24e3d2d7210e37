public import KinesiaBus
import KinesiaSystem
public import KinesiaWire

/// How a journaling process (ingest, worker) serves replay on a TCP bus with keys: through
/// the broker's replay port (``BusAddress/replayEndpoint``) instead of an endpoint of its own,
/// which would be outside the broker's CURVE and ZAP. A DEALER, a CURVE client with the
/// process's key, connects to the port and says which streams it serves
/// (``ReplayServeFrame``, every ``announceInterval``); the broker checks each client's right to
/// read the topic and forwards its request as `[client, request]`; the answer goes back as
/// `[client, reply frames...]` (``ReplayResponder``, the same answers as ``ReplayServer``).
///
/// Flow control is the client's credit, as with a ROUTER of its own: a reply that does not fit
/// in the DEALER's queue (`ZMQ_SNDHWM`, four batches) drops the rest of its batch, counted
/// (`replayDropped`), and the client asks again after its timeout. A serve frame the broker
/// refuses (a stream of a topic this key may not publish) is counted
/// (`replayBrokerRefusals`) and told once to `problems`.
///
/// Not `Sendable`: poll ``socket`` and call ``serve(from:budget:)`` on one thread.
///
/// ```swift
/// let link = try BrokerReplayLink(context: zmq, bus: bus) { source.servedStreams }
/// _ = try link.serve(from: source)   // on every turn of the loop
/// ```
public final class BrokerReplayLink: ReplayServing {
    /// How often the streams served are told to the broker (it forgets a server after 5 s).
    public static let announceInterval: Duration = .milliseconds(500)

    /// The DEALER connected to the broker's replay port.
    public let socket: ZMQSocket
    /// The broker's replay port, as this process connects to it (what its heartbeat announces).
    public let endpoint: String
    /// Requests by outcome (`replay.served`...), entries sent, replies dropped at a full queue,
    /// and the broker's refusals of what this process claimed to serve.
    public private(set) var counters: [String: Int] = [:]

    private let streams: () -> [ReplayServeFrame.Stream]
    private let problems: ((String) -> Void)?
    private let elapsed: ElapsedClock
    private var lastAnnounced: Duration?
    private var frames: [[UInt8]] = []
    private var toldRefusal = false

    /// Connects to the broker's replay port of `bus`.
    /// - Parameters:
    ///   - context: The context of the DEALER.
    ///   - bus: A TCP bus with ``BusAddress/credentials`` and a ``BusAddress/replayEndpoint``.
    ///   - problems: Told the first refusal from the broker.
    ///   - clock: What the announcements are timed on.
    ///   - streams: The streams served now (announced to the broker): what the process
    ///     journals, without reading the journals (it is asked twice a second).
    /// - Throws: ``ZMQError`` (``ZMQError/invalidArgument`` for a bus without a replay port).
    public init(
        context: ZMQContext, bus: BusAddress, problems: ((String) -> Void)? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        streams: @escaping () -> [ReplayServeFrame.Stream]
    ) throws(ZMQError) {
        guard let endpoint = bus.replayEndpoint else { throw .invalidArgument }
        self.endpoint = endpoint
        self.streams = streams
        self.problems = problems
        elapsed = ElapsedClock(clock)
        let socket = try ZMQSocket(.dealer, context: context, linger: .zero)
        do {
            try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
            try socket.set(.sendHighWaterMark, ReplayServer.highWaterMark)
            try socket.set(.receiveHighWaterMark, 64)
            try socket.set(.reconnectIntervalMax, .seconds(1))
            try socket.secure(for: bus)
            try socket.connect(endpoint)
        } catch {
            socket.close()
            throw error
        }
        self.socket = socket
    }

    deinit { socket.close() }

    /// Always: its announcements to the broker are timed.
    public var hasWorkWithoutRequests: Bool { true }

    /// Tells the broker the streams served when it is due, then answers the requests waiting
    /// (at most `budget`).
    /// - Returns: The requests answered.
    /// - Throws: ``ZMQError`` when the socket fails.
    @discardableResult
    public func serve(from source: some ReplaySource, budget: Int) throws(ZMQError) -> Int {
        let now = elapsed.now
        if lastAnnounced.map({ now - $0 >= Self.announceInterval }) ?? true {
            lastAnnounced = now
            for frame in ReplayServeFrame.frames(for: streams()) {
                // A frame that does not fit now goes with the next announcement.
                _ = try? socket.trySend([frame])
            }
        }
        var handled = 0
        while handled < budget, try socket.tryReceive(into: &frames) {
            handled += 1
            guard frames.count == 2 else {
                refused(frames)
                continue
            }
            let client = frames[0]
            let (replies, outcome) = ReplayResponder.answer(frames[1], from: source)
            counters["replay." + outcome, default: 0] += 1
            for (index, reply) in replies.enumerated() {
                guard try socket.trySend([client] + reply.frames()) else {
                    counters["replayDropped", default: 0] += replies.count - index
                    break
                }
                if case .entry = reply { counters["replayEntries", default: 0] += 1 }
            }
        }
        return handled
    }

    /// Closes the DEALER.
    public func close() { socket.close() }

    /// A message of the broker that is not a request: its refusal of a serve frame.
    private func refused(_ frames: [[UInt8]]) {
        counters["replayBrokerRefusals", default: 0] += 1
        guard !toldRefusal else { return }
        toldRefusal = true
        let reason: String
        if case .error(let failure)? = try? ReplayReply.decode(frames) {
            reason = failure.message
        } else {
            reason = "a message of \(frames.count) frames"
        }
        problems?("the broker refused what this process serves: \(reason) (counted in replayBrokerRefusals)")
    }
}

/// What serves replay: a ROUTER of its own (``ReplayServer``, on IPC and `--insecure` TCP), or
/// a DEALER to the broker's replay port (``BrokerReplayLink``, on TCP with keys).
public protocol ReplayServing: AnyObject {
    /// The socket to poll for requests.
    var socket: ZMQSocket { get }
    /// What the heartbeat announces as the replay endpoint.
    var endpoint: String { get }
    /// The `replay*` counters of `health/`.
    var counters: [String: Int] { get }
    /// Answers the requests waiting now (at most `budget`).
    @discardableResult
    func serve(from source: some ReplaySource, budget: Int) throws(ZMQError) -> Int
    /// Closes the sockets.
    func close()
    /// Whether ``serve(from:budget:)`` has work even while no request waits (clients whose idle
    /// time expires, an announcement due): a loop that polls ``socket`` calls it then, and
    /// otherwise only when the poll found the socket readable.
    var hasWorkWithoutRequests: Bool { get }
}

extension ReplayServing {
    /// Answers at most 16 requests waiting now.
    @discardableResult
    public func serve(from source: some ReplaySource) throws(ZMQError) -> Int {
        try serve(from: source, budget: 16)
    }
}

extension ReplayServer: ReplayServing {
    /// While clients are answered: their idle time expires.
    public var hasWorkWithoutRequests: Bool { admission.clients > 0 }
}
