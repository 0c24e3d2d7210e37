import KinesiaWire

/// The decisions of the broker's replay port, with no I/O: which replay server holds which
/// streams, where each request goes, which replies go back to whom, what is refused. The
/// broker's ``BrokerReplayPort`` gives it every message its ROUTER receives (with the sender's
/// role, from its ZAP user id) and the time, and sends what it returns.
///
/// A Majordomo-like shape (the ZeroMQ guide, chapter 4) on one ROUTER:
///
/// - a **server** (a journaling ingest or worker, a DEALER) says which streams it serves with
///   ``ReplayServeFrame``s, about every half second: `[server, KR 01 10 ...]`. A stream its
///   key's role may not serve (``BusRights/mayServe(_:_:)``: an ingest key claiming `event/`)
///   is refused, counted and answered with a `notAllowed` error. A server heard from for
///   ``serverLease`` is forgotten, and so is a stream it stopped listing for that long;
/// - a **client** sends a request, the frame of section 11 unchanged: `[client, request]`. A
///   client whose role may not read the topic (``BusRights/mayReplay(_:_:)``) gets a
///   `notAllowed` error; a malformed request a `malformedRequest` one, as from a server. The
///   request goes to the server that announced the stream last (of those that hold it: the
///   newest holder, such as the worker that took a session over); a request for a stream of
///   no server waits up to ``parkTime`` for one (a server's first announcement may come after
///   the heartbeat a client acted on), then gets `unknownStream`;
/// - a server's **reply** comes back as `[server, client, reply frames...]` and goes to the
///   client as `[client, reply frames...]`, only when that server was sent that client's
///   request of that id, and only for entries of the request's topic: a server cannot write to
///   a client that did not ask it, nor slip another topic into a batch. The batch's end or an
///   error closes the request; a request unanswered for ``pendingTimeout`` is forgotten (the
///   client asks again after its own timeout).
///
/// Everything refused is counted (``counters``, on `health/broker/` as `replay.refused.<why>`)
/// and the first ten of each reason, then every hundredth, are given to log.
///
/// ```swift
/// var routing = BrokerReplayRouting()
/// for output in routing.received(frames, peer: .role(.consumer), now: clock.now) {
///     switch output {
///     case .send(let message): _ = try? router.trySend(message)
///     case .log(let line): log.warning(line)
///     }
/// }
/// ```
struct BrokerReplayRouting {
    /// What the broker does.
    enum Output: Hashable, Sendable {
        /// Send this message on the ROUTER (its first frame is the peer's routing id).
        case send([[UInt8]])
        /// Log this line (a refusal: the first of its reason, then some).
        case log(String)
    }

    /// Why a message was refused: the counter `replay.refused.<reason>`.
    enum Refusal: String, CaseIterable, Hashable, Sendable {
        /// Not a request, a serve frame or a reply (foreign frames, a truncated request).
        case malformed
        /// A client whose role may not read the topic.
        case notAllowed
        /// A stream claimed by a server whose role may not publish its topic.
        case serve
        /// A request for a stream no server announced within the park time.
        case unknownStream
        /// A reply for no request under way from that server (or an entry of another topic).
        case reply
        /// A request beyond the bounds (requests under way, parked; servers, streams).
        case busy
    }

    /// How long a server, or a stream it listed, is kept without being heard from.
    let serverLease: Duration
    /// How long a request for a stream nobody announced waits for a server.
    let parkTime: Duration
    /// How long a request forwarded is kept waiting for its end.
    let pendingTimeout: Duration
    /// The most requests under way at once (every client together).
    let maximumPending: Int
    /// The most requests parked at once.
    let maximumParked: Int
    /// The most servers known at once.
    let maximumServers: Int
    /// The most streams one server is known to serve.
    let maximumStreamsPerServer: Int

    private struct StreamKey: Hashable {
        var topic: Topic
        var stream: StreamID
    }

    private struct Server {
        var lastHeard: Duration
        /// Per stream: when this server first listed it, and when it listed it last.
        var streams: [StreamKey: (first: Duration, last: Duration)] = [:]
    }

    private struct PendingKey: Hashable {
        var client: [UInt8]
        var requestID: UInt32
    }

    private struct Pending {
        var server: [UInt8]
        var topic: [UInt8]
        var deadline: Duration
    }

    private struct Parked {
        var client: [UInt8]
        var request: ReplayRequest
        var frame: [UInt8]
        var deadline: Duration
    }

    private var servers: [[UInt8]: Server] = [:]
    private var pending: [PendingKey: Pending] = [:]
    private var parked: [Parked] = []
    private var refused: [Refusal: Int] = [:]
    private var forwarded = 0
    private var entries = 0
    private var ends = 0
    private var expired = 0

    /// A routing table with these bounds.
    init(
        serverLease: Duration = .seconds(5), parkTime: Duration = .seconds(2),
        pendingTimeout: Duration = .seconds(30), maximumPending: Int = 65_536, maximumParked: Int = 4096,
        maximumServers: Int = 1024, maximumStreamsPerServer: Int = 65_536
    ) {
        self.serverLease = serverLease
        self.parkTime = parkTime
        self.pendingTimeout = pendingTimeout
        self.maximumPending = maximumPending
        self.maximumParked = maximumParked
        self.maximumServers = maximumServers
        self.maximumStreamsPerServer = maximumStreamsPerServer
    }

    /// `replay.servers`, `replay.streams`, `replay.requests` (forwarded), `replay.entries`,
    /// `replay.ends` (ends and errors of servers forwarded), `replay.pending`, `replay.parked`,
    /// `replay.expired` (requests forgotten unanswered) and `replay.refused.<reason>`.
    var counters: [String: Int] {
        var values = [
            "replay.servers": servers.count,
            "replay.streams": servers.values.reduce(0) { $0 + $1.streams.count },
            "replay.requests": forwarded, "replay.entries": entries, "replay.ends": ends,
            "replay.pending": pending.count, "replay.parked": parked.count, "replay.expired": expired,
        ]
        for reason in Refusal.allCases {
            values["replay.refused.\(reason.rawValue)"] = refused[reason, default: 0]
        }
        return values
    }

    /// The server a request for `topic` (and `stream`, when named) goes to now, if any: its
    /// routing id.
    func server(for topic: Topic, stream: StreamID?) -> [UInt8]? {
        var best: (id: [UInt8], first: Duration)?
        // The newest holder; between two that listed it at the same time, the same one always.
        func consider(_ id: [UInt8], _ first: Duration) {
            if let current = best {
                if first < current.first { return }
                if first == current.first, !current.id.lexicographicallyPrecedes(id) { return }
            }
            best = (id, first)
        }
        if let stream {
            for (id, server) in servers {
                if let times = server.streams[StreamKey(topic: topic, stream: stream)] {
                    consider(id, times.first)
                }
            }
            if best != nil { return best?.id }
        }
        // The current stream of the topic (or an earlier one, named by its id but no longer
        // announced: its server still holds it): the server that announced the topic last.
        for (id, server) in servers {
            for (key, times) in server.streams where key.topic == topic { consider(id, times.first) }
        }
        return best?.id
    }

    /// One message the ROUTER received: `frames[0]` is the sender's routing id.
    /// - Parameters:
    ///   - peer: The sender's role (from its ZAP user id), `nil` for a user id of no role.
    ///   - now: The time, on the broker's clock.
    mutating func received(_ frames: [[UInt8]], peer: BusPeer?, now: Duration) -> [Output] {
        guard frames.count >= 2 else { return refuse(.malformed, "a message of \(frames.count) frame") }
        let sender = frames[0]
        let head = frames[1]
        if frames.count == 2, Self.type(of: head) == ReplayFormat.FrameType.serve.rawValue {
            return serve(sender, head, peer: peer, now: now)
        }
        if frames.count >= 3, servers[sender] != nil {
            servers[sender]?.lastHeard = now
            return reply(from: sender, frames)
        }
        if frames.count >= 3, let type = Self.type(of: frames[2]), type & 0x80 != 0 {
            // A reply from a server forgotten (silent past its lease): no client is waiting for
            // it here, and the server is told nothing (its next announcement brings it back).
            return refuse(.reply, "a reply from a replay server that is not known (silent past its lease)")
        }
        guard frames.count == 2 else {
            return refuse(
                .malformed, "a message of \(frames.count) frames from a peer that serves nothing",
                answer: sender, failure: Self.failure(0, .malformedRequest, "a request is one frame"))
        }
        return request(from: sender, head, peer: peer, now: now)
    }

    /// The passing of time: parked requests whose time is up get `unknownStream`, requests and
    /// servers and streams past their time are forgotten.
    mutating func tick(now: Duration) -> [Output] {
        var outputs: [Output] = []
        var still: [Parked] = []
        for waiting in parked {
            guard now >= waiting.deadline else {
                still.append(waiting)
                continue
            }
            outputs += refuse(
                .unknownStream, "no replay server holds \(waiting.request.topic)",
                answer: waiting.client,
                failure: Self.failure(
                    waiting.request.requestID, .unknownStream,
                    "no replay server holds \(waiting.request.topic) (through the broker)",
                    stream: waiting.request.stream))
        }
        parked = still
        let before = pending.count
        pending = pending.filter { $0.value.deadline > now }
        expired += before - pending.count
        for (id, server) in servers {
            if now - server.lastHeard >= serverLease {
                servers[id] = nil
                continue
            }
            servers[id]?.streams = server.streams.filter { now - $0.value.last < serverLease }
        }
        return outputs
    }

    // MARK: - Servers

    private mutating func serve(_ sender: [UInt8], _ head: [UInt8], peer: BusPeer?, now: Duration) -> [Output]
    {
        let frame: ReplayServeFrame
        do {
            frame = try ReplayServeFrame.decode(head)
        } catch {
            return refuse(
                .malformed, "a serve frame that does not read: \(error)", answer: sender,
                failure: Self.failure(0, .malformedRequest, "serve frame: \(error)"))
        }
        if servers[sender] == nil {
            guard servers.count < maximumServers else {
                return refuse(.busy, "a replay server beyond the \(maximumServers) known")
            }
            servers[sender] = Server(lastHeard: now)
        }
        servers[sender]?.lastHeard = now
        var outputs: [Output] = []
        var refusedTopics: [Topic] = []
        for entry in frame.streams {
            guard let peer, BusRights.mayServe(peer, Self.kind(entry.topic)) else {
                refusedTopics.append(entry.topic)
                continue
            }
            let key = StreamKey(topic: entry.topic, stream: entry.stream)
            if let times = servers[sender]?.streams[key] {
                servers[sender]?.streams[key] = (times.first, now)
            } else if servers[sender]!.streams.count < maximumStreamsPerServer {
                servers[sender]?.streams[key] = (now, now)
            } else {
                outputs += refuse(
                    .busy, "a replay server listing more than \(maximumStreamsPerServer) streams")
            }
        }
        if let topic = refusedTopics.first {
            let who = peer.map(Self.name) ?? "a key of no role"
            outputs += refuse(
                .serve, "\(who) may not serve replay of \(topic) (\(refusedTopics.count) streams refused)",
                count: refusedTopics.count, answer: sender,
                failure: Self.failure(0, .notAllowed, "\(who) may not serve replay of \(topic)"))
        }
        // Requests waiting for a server of a stream now known.
        var still: [Parked] = []
        for waiting in parked {
            if let server = server(for: waiting.request.topic, stream: waiting.request.stream) {
                outputs += forward(waiting.client, waiting.request, waiting.frame, to: server, now: now)
            } else {
                still.append(waiting)
            }
        }
        parked = still
        return outputs
    }

    private mutating func reply(from server: [UInt8], _ frames: [[UInt8]]) -> [Output] {
        let client = frames[1]
        let head = frames[2]
        let type = Self.type(of: head)
        guard let type, head.count >= 8,
            [0x81, 0x82, 0x83, 0x8F].contains(type)
        else { return refuse(.reply, "a reply that is not one from a replay server") }
        let requestID = ReplayRequest.requestID(ofMalformed: head)
        let key = PendingKey(client: client, requestID: requestID)
        guard let waiting = pending[key], waiting.server == server else {
            return refuse(.reply, "a reply to request \(requestID) its server was not sent")
        }
        if type == ReplayFormat.FrameType.entry.rawValue {
            guard frames.count == 5, frames[3] == waiting.topic else {
                return refuse(.reply, "an entry not of the topic of request \(requestID)")
            }
            entries += 1
        } else {
            guard frames.count == 3 else { return refuse(.reply, "an end of \(frames.count - 2) frames") }
            pending[key] = nil
            ends += 1
        }
        return [.send(Array(frames.dropFirst()))]
    }

    // MARK: - Clients

    private mutating func request(from client: [UInt8], _ frame: [UInt8], peer: BusPeer?, now: Duration)
        -> [Output]
    {
        let request: ReplayRequest
        do {
            request = try ReplayRequest.decode(frame)
        } catch {
            let code: ReplayErrorCode
            if case .unsupportedVersion = error {
                code = .unsupportedVersion
            } else {
                code = .malformedRequest
            }
            return refuse(
                .malformed, "a request that does not read: \(error)", answer: client,
                failure: Self.failure(ReplayRequest.requestID(ofMalformed: frame), code, "\(error)"))
        }
        guard let peer, BusRights.mayReplay(peer, Self.kind(request.topic)) else {
            let who = peer.map(Self.name) ?? "a key of no role"
            return refuse(
                .notAllowed, "\(who) may not replay \(request.topic)", answer: client,
                failure: Self.failure(
                    request.requestID, .notAllowed, "\(who) may not replay \(request.topic)",
                    stream: request.stream))
        }
        guard let server = server(for: request.topic, stream: request.stream) else {
            guard parked.count < maximumParked else {
                return refuse(.busy, "more than \(maximumParked) requests wait for a server")
            }
            parked.append(Parked(client: client, request: request, frame: frame, deadline: now + parkTime))
            return []
        }
        return forward(client, request, frame, to: server, now: now)
    }

    private mutating func forward(
        _ client: [UInt8], _ request: ReplayRequest, _ frame: [UInt8], to server: [UInt8], now: Duration
    ) -> [Output] {
        let key = PendingKey(client: client, requestID: request.requestID)
        guard pending[key] != nil || pending.count < maximumPending else {
            return refuse(.busy, "more than \(maximumPending) requests under way")
        }
        pending[key] = Pending(server: server, topic: request.topic.bytes, deadline: now + pendingTimeout)
        forwarded += 1
        return [.send([server, client, frame])]
    }

    // MARK: - Refusals

    private mutating func refuse(
        _ reason: Refusal, _ text: String, count: Int = 1, answer: [UInt8]? = nil,
        failure: ReplayFailure? = nil
    ) -> [Output] {
        let before = refused[reason, default: 0]
        refused[reason] = before + count
        var outputs: [Output] = []
        if let answer, let failure { outputs.append(.send([answer] + ReplayReply.error(failure).frames())) }
        let total = before + count
        if total <= 10 || before / 100 != total / 100 {
            outputs.append(
                .log("replay: refused \(text) (\(total) refused as replay.refused.\(reason.rawValue))"))
        }
        return outputs
    }

    private static func failure(
        _ requestID: UInt32, _ code: ReplayErrorCode, _ message: String, stream: StreamID? = nil
    ) -> ReplayFailure {
        ReplayFailure(
            requestID: requestID, code: code, stream: stream ?? StreamID(rawValue: 0), first: 0, last: 0,
            message: message)
    }

    /// The frame type of a replay frame of this version (byte 3), `nil` for a foreign one.
    private static func type(of frame: [UInt8]) -> UInt8? {
        guard frame.count >= 4, frame[0] == ReplayFormat.magic.0, frame[1] == ReplayFormat.magic.1,
            frame[2] == ReplayFormat.version
        else { return nil }
        return frame[3]
    }

    private static func kind(_ topic: Topic) -> BusRights.TopicKind {
        topic.bytes.withUnsafeBytes { BusRights.TopicKind(topic: $0) }
    }

    private static func name(_ peer: BusPeer) -> String {
        switch peer {
        case .trusted: "a trusted peer"
        case .role(let role): "\(role.withArticle) key"
        }
    }
}
