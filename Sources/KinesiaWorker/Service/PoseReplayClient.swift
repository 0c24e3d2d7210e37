import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaWire

/// The worker's side of pose replay: sends the ``WorkerCore``'s pose requests to the replay
/// server that announced the stream (an ingest, on `health/`), and turns the replies into what
/// the core is told, under the request numbers the core gave. The I/O shell of ``PoseFeed``'s
/// decisions (a live request's timeout is the feed's own); it decides where the servers are: a
/// rebuild's request unanswered for ``requestTimeout`` is reported timed out; a live request for a stream
/// no server announces is reported unknown at once (a publisher that serves no replay, or whose
/// server has gone: not announced for ``announcementExpiry``), except in the first
/// ``announcementGrace`` of the client's life, when heartbeats may not have arrived yet; a
/// rebuild's request waits ``announcementTimeout`` for its server. Replay
/// sockets of endpoints no longer announced are closed.
///
/// Not `Sendable`: use it on the worker's loop thread.
final class PoseReplayClient {
    /// What a server answered (or the time said).
    enum Reply {
        /// A replayed pose.
        case pose(camera: String, stream: StreamID, sequence: UInt64, pose: FlatPose)
        /// The end of a batch (its `requestID` the core's).
        case ended(camera: String, ReplayBatchEnd)
        /// The server does not hold what request `id` asked: `first` held, or `nil` (unknown
        /// stream, no server).
        case failed(camera: String, id: UInt32, stream: StreamID, first: UInt64?)
        /// A rebuild's request got no answer in time: ask again.
        case timedOut(camera: String)
    }

    let requestTimeout: Duration = .seconds(1)
    /// Heartbeats come every second: a stream's server is known after this long, or there is none.
    let announcementGrace: Duration = .seconds(2)
    /// How long a rebuild's request waits for its stream's server to be announced (an ingest
    /// restarting at the same time as the worker): giving up would start a new run.
    let announcementTimeout: Duration = .seconds(10)
    /// A server not announced for this long has gone (its sockets are closed).
    let announcementExpiry: Duration = .seconds(5)

    private struct Pending {
        var camera: String
        var request: PoseReplayRequest
        var endpoint: String?
        var since: Duration
        /// The number on the wire (one counter for every camera's requests).
        var id: UInt32
        /// The number the core gave.
        var coreID: UInt32
    }

    private let context: ZMQContext
    private let asksForReplay: Bool
    private let bus: BusAddress
    /// Where each stream is served, since when, and whether a heartbeat said so (`false`: a
    /// hint remembered from an earlier run, ``remember(_:now:)``).
    private var endpoints: [StreamID: (endpoint: String, at: Duration, announced: Bool)] = [:]
    private var dealers: [String: ZMQSocket] = [:]
    private var pending: [String: Pending] = [:]
    private var nextID: UInt32 = 1
    private var frames: [[UInt8]] = []
    /// Replies that could not be read.
    private(set) var malformedReplies = 0

    /// A client on `bus` (which says how replay is asked for: at the endpoint each ingest
    /// announces, or through the broker's replay port on a TCP bus with keys).
    init(context: ZMQContext, bus: BusAddress) {
        self.context = context
        self.bus = bus
        asksForReplay = ReplayDealer.asksForReplay(on: bus)
    }

    /// The sockets to poll for replies.
    var sockets: [ZMQSocket] { Array(dealers.values) }

    /// Learns where pose streams are served; sends the requests that waited for it.
    ///
    /// - Returns: Whether a stream's endpoint is new or changed (worth remembering:
    ///   ``announcedEndpoints``).
    @discardableResult
    func announced(_ announcement: ReplayAnnouncement, now: Duration) -> Bool {
        var changed = false
        for info in announcement.streams where info.topic.kind == .pose {
            let known = endpoints[info.stream]
            if known?.endpoint != announcement.endpoint || known?.announced != true { changed = true }
            endpoints[info.stream] = (announcement.endpoint, now, true)
        }
        for (camera, waiting) in pending where waiting.endpoint == nil {
            if endpoints[waiting.request.stream] != nil {
                send(camera: camera, waiting.request, id: waiting.coreID, now: now)
            }
        }
        return changed
    }

    /// Where the streams announced so far are served (to remember for the next run).
    var announcedEndpoints: [StreamID: String] {
        endpoints.filter(\.value.announced).mapValues(\.endpoint)
    }

    /// Endpoints remembered from an earlier run (``ReplayEndpointHints``), asked at once for
    /// their streams; one that does not answer within ``requestTimeout`` or does not hold the
    /// stream is forgotten, and the request waits for an announcement as it would have.
    func remember(_ hints: [StreamID: String], now: Duration) {
        guard asksForReplay else { return }
        for (stream, endpoint) in hints where endpoints[stream] == nil {
            endpoints[stream] = (endpoint, now, false)
        }
    }

    /// A hint that did not answer for `request` of `camera`: forgotten; the request waits for
    /// the stream's announcement (from when it was first sent).
    private func forgetHint(camera: String, _ waiting: Pending) -> Bool {
        guard let endpoint = waiting.endpoint, let known = endpoints[waiting.request.stream],
            !known.announced,
            known.endpoint == endpoint
        else { return false }
        endpoints[waiting.request.stream] = nil
        if !endpoints.values.contains(where: { $0.endpoint == endpoint }), let dealer = dealers[endpoint] {
            dealer.close()
            dealers[endpoint] = nil
        }
        var again = waiting
        again.endpoint = nil
        pending[camera] = again
        return true
    }

    /// Sends (or, with no server known yet for the stream, keeps) `request` for `camera`; it
    /// replaces the camera's request under way.
    ///
    /// - Returns: The failure, at once, of a live request for a stream no server announces
    ///   past ``announcementGrace`` (a publisher that serves no replay): the caller hands it
    ///   to the core right away, so that each hole of such a publisher is given up as its pose
    ///   arrives, not one hole per turn of the loop.
    @discardableResult
    func send(camera: String, _ request: PoseReplayRequest, id coreID: UInt32, now: Duration) -> Reply? {
        if !request.waitsForServer, now >= announcementGrace, endpoints[request.stream] == nil {
            pending[camera] = nil
            return .failed(camera: camera, id: coreID, stream: request.stream, first: nil)
        }
        let id = nextID
        nextID &+= 1
        var entry = Pending(
            camera: camera, request: request, endpoint: nil, since: now, id: id, coreID: coreID)
        if let endpoint = endpoints[request.stream]?.endpoint, let dealer = dealer(for: endpoint),
            let topic = try? Topic.pose(camera: camera)
        {
            var limit = UInt64(ReplayFormat.maximumBatch)
            if let through = request.through {
                // Total: `through - from` may be as large as a UInt64 goes.
                let span = through >= request.from ? through - request.from : 0
                limit = span < limit ? span + 1 : limit
            }
            let frame = ReplayRequest(
                requestID: id, topic: topic, stream: request.stream, from: request.from, limit: UInt32(limit)
            ).encoded()
            _ = try? dealer.trySend([frame])
            entry.endpoint = endpoint
        }
        pending[camera] = entry
        return nil
    }

    /// The replies waiting now, and the requests whose time is up.
    func receive(now: Duration) -> [Reply] {
        var replies: [Reply] = []
        for dealer in dealers.values {
            var budget = 4096
            while budget > 0, (try? dealer.tryReceive(into: &frames)) == true {
                budget -= 1
                guard let reply = try? ReplayReply.decode(frames) else {
                    malformedReplies += 1
                    continue
                }
                guard let (camera, waiting) = pending.first(where: { $0.value.id == reply.requestID }) else {
                    continue
                }
                switch reply {
                case .entry(let entry):
                    guard entry.frames.count == 2, let decoded = try? PoseCodec.decode(entry.frames[1]) else {
                        malformedReplies += 1
                        continue
                    }
                    pending[camera]?.since = now
                    replies.append(
                        .pose(
                            camera: camera, stream: entry.stream, sequence: entry.sequence,
                            pose: FlatPose(decoded.pose)))
                case .end(var end):
                    pending[camera] = nil
                    end.requestID = waiting.coreID
                    replies.append(.ended(camera: camera, end))
                case .error(let failure):
                    // A remembered endpoint that does not hold the stream: not an answer.
                    if forgetHint(camera: camera, waiting) { continue }
                    pending[camera] = nil
                    replies.append(
                        .failed(
                            camera: camera, id: waiting.coreID, stream: failure.stream,
                            first: failure.code == .notRetained ? failure.first : nil))
                }
            }
        }
        // A server gone: its requests fail now, not at the next turn.
        replies += expire(now: now)
        for (camera, waiting) in pending {
            let waited = now - waiting.since
            if waiting.endpoint == nil,
                waiting.request.waitsForServer ? waited >= announcementTimeout : now >= announcementGrace
            {
                pending[camera] = nil
                replies.append(
                    .failed(camera: camera, id: waiting.coreID, stream: waiting.request.stream, first: nil))
            } else if waiting.endpoint != nil, now - waiting.since >= requestTimeout {
                if forgetHint(camera: camera, waiting) { continue }
                // A live request's timeout is the feed's: it asks again itself.
                guard waiting.request.waitsForServer else { continue }
                pending[camera] = nil
                replies.append(.timedOut(camera: camera))
            }
        }
        return replies
    }

    /// Forgets the servers not announced for ``announcementExpiry`` and closes their sockets.
    ///
    /// - Returns: The failures of the requests they held.
    private func expire(now: Duration) -> [Reply] {
        let gone = endpoints.filter { now - $0.value.at >= announcementExpiry }
        guard !gone.isEmpty else { return [] }
        for stream in gone.keys { endpoints[stream] = nil }
        let live = Set(endpoints.values.map(\.endpoint))
        for (endpoint, dealer) in dealers where !live.contains(endpoint) {
            dealer.close()
            dealers[endpoint] = nil
        }
        var failures: [Reply] = []
        for (camera, waiting) in pending where waiting.endpoint.map({ !live.contains($0) }) ?? false {
            // Its server is gone: no answer is coming.
            pending[camera] = nil
            failures.append(
                .failed(camera: camera, id: waiting.coreID, stream: waiting.request.stream, first: nil))
        }
        return failures
    }

    /// Closes the sockets.
    func close() {
        for dealer in dealers.values { dealer.close() }
        dealers = [:]
    }

    private func dealer(for endpoint: String) -> ZMQSocket? {
        if let existing = dealers[endpoint] { return existing }
        guard asksForReplay, ReplayDealer.isReplayEndpoint(endpoint), dealers.count < 64,
            let socket = try? ReplayDealer.open(endpoint, context: context, bus: bus)
        else { return nil }
        dealers[endpoint] = socket
        return socket
    }
}
