import KinesiaJSON

/// A stream a process published and no longer serves because it goes on in another process: a
/// pool session moved to another worker, or stopped by its fence when the worker's lease lapsed
/// (the `"moving"` field of a health report).
///
/// A consumer that holds a hole in such a stream, and knows no replay endpoint for it, waits
/// for the process that takes it over to announce it (a takeover: the coordinator's lease, its
/// absence, a rebuild) instead of taking the stream for one whose publisher serves no replay.
///
/// ```json
/// "moving":[{"stream":"2f05e0ced4d7a433","topic":"event/cam7/left/"}]
/// ```
public struct MovingStream: Hashable, Sendable {
    /// The most streams one report lists (the rest wait for a later report).
    public static let maximumPerReport = 64

    /// The stream's topic.
    public var topic: Topic
    /// The stream.
    public var stream: StreamID

    /// A stream that is moving.
    public init(topic: Topic, stream: StreamID) {
        self.topic = topic
        self.stream = stream
    }

    func appendJSON(to out: inout String) {
        out += "{\"stream\":\"\(stream)\",\"topic\":"
        JSONWriter.appendString(topic.string, to: &out)
        out += "}"
    }

    /// The `"moving"` array of a report's fields (`[]` when absent).
    static func list(in fields: JSONFields) throws(JSONShapeError) -> [MovingStream] {
        guard fields.members["moving"] != nil else { return [] }
        let values = try fields.array("moving")
        guard values.count <= maximumPerReport else {
            throw fields.error(
                "moving", "\"moving\" lists at most \(maximumPerReport) streams, found \(values.count)")
        }
        var streams: [MovingStream] = []
        for (index, value) in values.enumerated() {
            let item = try JSONFields(value, what: "a stream", path: fields.path("moving") + [.index(index)])
            let (topic, stream) = try item.topicAndStream()
            streams.append(MovingStream(topic: topic, stream: stream))
        }
        return streams
    }
}

extension JSONFields {
    /// The `"topic"` and `"stream"` (16 hexadecimal digits, not all zero) of a stream's object.
    func topicAndStream() throws(JSONShapeError) -> (Topic, StreamID) {
        let topicText = try string("topic")
        let streamText = try string("stream")
        guard let topic = try? Topic(parsing: topicText) else {
            throw error("topic", "\"topic\" is not a valid topic")
        }
        guard streamText.utf8.count == 16, let raw = UInt64(streamText, radix: 16), raw != 0 else {
            throw error("stream", "\"stream\" must be 16 hexadecimal digits, not all zero")
        }
        return (topic, StreamID(raw))
    }
}
