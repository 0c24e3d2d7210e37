import KinesiaMotion

/// The `"replay"` field of a health report: where the process answers replay requests, and
/// where each of its streams stands.
///
/// Health reports come about once a second, so this is the heartbeat of the replay protocol:
/// a receiver whose last message of a stream is older than the announced `last` knows that
/// messages were lost at the end of a stream that has gone quiet, and asks for them.
///
/// ```json
/// "replay":{"endpoint":"ipc:///run/user/1000/kinesia/replay/worker-1.sock",
///           "streams":[{"first":0,"last":41,"stream":"0123456789abcdef","topic":"event/cam0/left/"}]}
/// ```
public struct ReplayAnnouncement: Hashable, Sendable {
    /// The most streams one announcement lists (a health report stays under its size limit).
    public static let maximumStreams = 64

    /// The ROUTER endpoint to connect a DEALER to (`ipc://...` or `tcp://HOST:PORT`).
    public var endpoint: String
    /// The streams served, with their first and last sequence numbers.
    public var streams: [ReplayStreamInfo]

    /// Makes an announcement (at most ``maximumStreams`` streams are kept: the last ones).
    public init(endpoint: String, streams: [ReplayStreamInfo]) {
        self.endpoint = endpoint
        self.streams = Array(streams.suffix(Self.maximumStreams))
    }

    func appendJSON(to out: inout String) {
        out += "{\"endpoint\":"
        JSONWriter.appendString(endpoint, to: &out)
        out += ",\"streams\":["
        for (index, info) in streams.enumerated() {
            if index > 0 { out += "," }
            out += "{\"first\":\(info.first),\"last\":\(info.last),\"stream\":\"\(info.stream)\",\"topic\":"
            JSONWriter.appendString(info.topic.string, to: &out)
            out += "}"
        }
        out += "]}"
    }

    init(fields: JSONFields) throws(JSONShapeError) {
        let endpoint = try fields.string("endpoint")
        var streams: [ReplayStreamInfo] = []
        for (index, value) in try fields.array("streams").enumerated() {
            let item = try JSONFields(value, what: "a stream", path: fields.path("streams") + [.index(index)])
            let topicText = try item.string("topic")
            let streamText = try item.string("stream")
            let first = try item.integer("first")
            let last = try item.integer("last")
            guard let topic = try? Topic(parsing: topicText) else {
                throw item.error("topic", "\"topic\" is not a valid topic")
            }
            guard streamText.utf8.count == 16, let raw = UInt64(streamText, radix: 16), raw != 0 else {
                throw item.error("stream", "\"stream\" must be 16 hexadecimal digits, not all zero")
            }
            guard first >= 0, last >= 0 else {
                throw item.error("first", "sequence numbers are never negative")
            }
            streams.append(
                ReplayStreamInfo(
                    topic: topic, stream: StreamID(raw), first: UInt64(first), last: UInt64(last)))
        }
        self.init(endpoint: endpoint, streams: streams)
    }
}
