import KinesiaBus
import KinesiaClient
import KinesiaJSON
import KinesiaService
import KinesiaWire

/// One client's server-sent events of one session or of a camera's sessions
/// (``EventStreamRequest``): its own ``ExactlyOnceSubscriber`` on the event and snapshot topics,
/// resumed after the client's `Last-Event-ID` (what it missed is fetched from the worker's
/// journal, once), from now otherwise. Used by the client's connection thread only.
///
/// Each event is `id:` (``EventStreamRequest/id(_:session:)``), `event: event`, `data:` the event as `kinesia listen
/// --format json` prints it (`topic`, `stream`, `seq`, then the wire format's keys); each snapshot
/// `event: snapshot` (no id: a snapshot never moves the resume point); events that cannot be had
/// any more `event: lost` with `data: {"topic":T,"first":N,"end":M}` (sequence numbers `N..<M`); and, after
/// ``heartbeat`` without anything, a comment line, so that proxies and browsers keep the
/// connection and a client that went away is noticed.
final class SessionEventStream: @unchecked Sendable {
    /// How long the stream stays silent at most.
    static let heartbeat: Duration = .seconds(15)
    /// The messages a client's subscriber queues at most.
    static let queuedMessages: Int32 = 1000

    private let subscriber: ExactlyOnceSubscriber
    private let stop: StopToken
    private let failed: @Sendable (String) -> Void
    private var closed = false
    /// The session of a session's stream (`nil`: a camera's).
    private let session: String?
    /// Where each session's events stand, for the ids.
    private var positions: [String: EventStreamRequest.Position]

    /// Follows `request`'s session, or its camera's sessions, on `bus` until `stop`.
    /// - Throws: ``TopicError`` (never for a parsed request), ``ZMQError``.
    /// `failed` is told why the stream ends early (the bus failed under it).
    init(
        _ request: EventStreamRequest, context: ZMQContext, bus: BusAddress, stop: StopToken,
        failed: @escaping @Sendable (String) -> Void
    ) throws {
        var topics: [TopicPrefix]
        if let name = request.name {
            topics = [
                try Topic.event(camera: request.camera, session: name).prefix,
                try Topic.snapshot(camera: request.camera, session: name).prefix,
            ]
        } else {
            topics = [try .events(camera: request.camera), try .snapshots(camera: request.camera)]
        }
        var cursor = ReplayCursor()
        for (name, position) in request.resume {
            cursor.delivered[
                ReplayStreamKey(
                    topic: try Topic.event(camera: request.camera, session: name), stream: position.stream)] =
                position.sequence
        }
        // A client that stops reading leaves its messages queued here: at most this many (about a
        // minute of a session's snapshots, half a megabyte), then the newest are dropped and
        // fetched again by replay when it reads again.
        subscriber = try ExactlyOnceSubscriber(
            context: context, bus: bus, topics: topics, from: .now, cursor: cursor, maximumBuffered: 1000,
            highWaterMark: Self.queuedMessages)
        self.stop = stop
        self.failed = failed
        session = request.name
        positions = request.resume
    }

    /// The next server-sent events, waiting for them (at most ``heartbeat``); `nil` when the
    /// gateway stops or the bus fails.
    func next() -> [UInt8]? {
        var waited = Duration.zero
        while !stop.isRequested, !closed {
            let delivery: ExactlyOnceSubscriber.Delivery?
            do {
                delivery = try subscriber.receive(timeout: .milliseconds(250))
            } catch {
                failed("\(error)")
                return nil
            }
            guard let delivery else {
                waited += .milliseconds(250)
                if waited >= Self.heartbeat { return Array(": still here\n\n".utf8) }
                continue
            }
            if case .message(let message) = delivery, case .event = message.body,
                let name = message.topic.session
            {
                positions[name] = EventStreamRequest.Position(
                    stream: message.header.streamID, sequence: message.header.sequence)
            }
            if let text = Self.text(of: delivery, id: EventStreamRequest.id(positions, session: session)) {
                return Array(text.utf8)
            }
        }
        return nil
    }

    /// Closes the subscriber.
    func close() {
        guard !closed else { return }
        closed = true
        subscriber.close()
    }

    /// The server-sent event of `delivery`, or `nil` for what a client is not sent (health,
    /// malformed messages).
    static func text(of delivery: ExactlyOnceSubscriber.Delivery, id: String) -> String? {
        switch delivery {
        case .message(let message):
            var data = "{\"topic\":"
            JSONWriter.appendString(message.topic.string, to: &data)
            data += ",\"stream\":\"\(message.header.streamID)\",\"seq\":\(message.header.sequence),"
            switch message.body {
            case .event(let json):
                return "id: \(id)\nevent: event\ndata: \(data)\(json.dropFirst())\n\n"
            case .snapshot(let json):
                return "event: snapshot\ndata: \(data)\(json.dropFirst())\n\n"
            default:
                return nil
            }
        case .lost(let topic, let sequences):
            var data = "{\"topic\":"
            JSONWriter.appendString(topic.string, to: &data)
            return
                "event: lost\ndata: \(data),\"first\":\(sequences.lowerBound),\"end\":\(sequences.upperBound)}\n\n"
        case .health, .malformed:
            return nil
        }
    }
}
