import KinesiaJSON
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
///
/// A process with more streams than one health report holds announces them in **pages**
/// (``pages(maximumStreams:maximumJSONSize:)``): ``HealthPublisher`` sends one report per
/// page, so every stream is announced, however many there are. A receiver keeps what each
/// page taught it: a stream absent from one report is not a stream that went away.
public struct ReplayAnnouncement: Hashable, Sendable {
    /// The most streams one page lists.
    public static let maximumStreams = 64
    /// The most bytes of JSON one page takes (``appendJSON(to:)``), so that a health report
    /// with a page and its counters fits ``WireFormat/maximumJSONPayloadSize``.
    public static let maximumPageJSONSize = 8 * 1024

    /// The ROUTER endpoint to connect a DEALER to (`ipc://...` or `tcp://HOST:PORT`).
    public var endpoint: String
    /// The streams served, with their first and last sequence numbers.
    public var streams: [ReplayStreamInfo]

    /// Makes an announcement of every stream given (split it with
    /// ``pages(maximumStreams:maximumJSONSize:)`` to send it).
    public init(endpoint: String, streams: [ReplayStreamInfo]) {
        self.endpoint = endpoint
        self.streams = streams
    }

    /// The announcement split into pages of at most `maximumStreams` streams and at most
    /// `maximumJSONSize` bytes of JSON each, in order; every stream is in exactly one page (a
    /// stream whose entry alone is larger than `maximumJSONSize`, a topic near its longest,
    /// gets a page of its own). An announcement without streams is one page.
    ///
    /// ```swift
    /// for page in announcement.pages() { send(report(replay: page)) }
    /// ```
    public func pages(
        maximumStreams: Int = Self.maximumStreams, maximumJSONSize: Int = Self.maximumPageJSONSize
    )
        -> [ReplayAnnouncement]
    {
        var pages: [ReplayAnnouncement] = []
        var page = ReplayAnnouncement(endpoint: endpoint, streams: [])
        let empty = page.jsonSize
        var size = empty
        for info in streams {
            let cost = Self.jsonSize(of: info) + 1
            if !page.streams.isEmpty, page.streams.count >= maximumStreams || size + cost > maximumJSONSize {
                pages.append(page)
                page.streams = []
                size = empty
            }
            page.streams.append(info)
            size += cost
        }
        pages.append(page)
        return pages
    }

    private var jsonSize: Int {
        var out = ""
        appendJSON(to: &out)
        return out.utf8.count
    }

    private static func jsonSize(of info: ReplayStreamInfo) -> Int {
        var out = ""
        appendJSON(of: info, to: &out)
        return out.utf8.count
    }

    private static func appendJSON(of info: ReplayStreamInfo, to out: inout String) {
        out += "{\"first\":\(info.first),\"last\":\(info.last),\"stream\":\"\(info.stream)\",\"topic\":"
        JSONWriter.appendString(info.topic.string, to: &out)
        out += "}"
    }

    func appendJSON(to out: inout String) {
        out += "{\"endpoint\":"
        JSONWriter.appendString(endpoint, to: &out)
        out += ",\"streams\":["
        for (index, info) in streams.enumerated() {
            if index > 0 { out += "," }
            Self.appendJSON(of: info, to: &out)
        }
        out += "]}"
    }

    init(fields: JSONFields) throws(JSONShapeError) {
        let endpoint = try fields.string("endpoint")
        var streams: [ReplayStreamInfo] = []
        for (index, value) in try fields.array("streams").enumerated() {
            let item = try JSONFields(value, what: "a stream", path: fields.path("streams") + [.index(index)])
            let (topic, stream) = try item.topicAndStream()
            let first = try item.integer("first")
            let last = try item.integer("last")
            guard first >= 0, last >= 0 else {
                throw item.error("first", "sequence numbers are never negative")
            }
            streams.append(
                ReplayStreamInfo(topic: topic, stream: stream, first: UInt64(first), last: UInt64(last)))
        }
        self.init(endpoint: endpoint, streams: streams)
    }
}
