/// "Send me the messages of topic T, stream S, from sequence N, at most K": the one frame a
/// replay client sends.
///
/// | Offset | Size | Field |
/// |-------:|-----:|-------|
/// | 0 | 2 | magic `4b 52` |
/// | 2 | 1 | version `01` |
/// | 3 | 1 | type `01` |
/// | 4 | 4 | request id (UInt32, echoed in every reply) |
/// | 8 | 8 | stream id (UInt64; 0: the stream the server holds now for the topic) |
/// | 16 | 8 | from sequence (UInt64) |
/// | 24 | 4 | limit (UInt32, at least 1; the server serves at most ``ReplayFormat/maximumBatch``) |
/// | 28 | 1 | topic length `n` |
/// | 29 | n | topic |
public struct ReplayRequest: Hashable, Sendable {
    /// Chosen by the client; every reply to this request carries it.
    public var requestID: UInt32
    /// The topic of the stream.
    public var topic: Topic
    /// The stream; `nil` (0 on the wire) asks for the stream the server holds now.
    public var stream: StreamID?
    /// The first sequence number wanted.
    public var from: UInt64
    /// The most entries wanted (at least 1).
    public var limit: UInt32

    /// Makes a request.
    public init(requestID: UInt32, topic: Topic, stream: StreamID?, from: UInt64, limit: UInt32) {
        self.requestID = requestID
        self.topic = topic
        self.stream = stream
        self.from = from
        self.limit = limit
    }

    /// The request's frame.
    public func encoded() -> [UInt8] {
        let topicBytes = topic.bytes
        var out = ReplayFrameWriter(type: .request)
        out.append(requestID)
        out.append(stream?.rawValue ?? 0)
        out.append(from)
        out.append(limit)
        out.bytes.append(UInt8(topicBytes.count))
        out.bytes += topicBytes
        return out.bytes
    }

    /// Reads a request frame.
    /// - Throws: ``ReplayFrameError``: truncated, foreign, of another version or type, a bad
    ///   topic, a zero limit, trailing bytes.
    public static func decode(_ frame: [UInt8]) throws(ReplayFrameError) -> ReplayRequest {
        var reader = try ReplayFrameReader(frame, expecting: [.request])
        let requestID = try reader.uint32()
        let stream = try reader.uint64()
        let from = try reader.uint64()
        let limit = try reader.uint32()
        let length = Int(try reader.uint8())
        let topicBytes = try reader.bytes(length)
        try reader.finish()
        let topic: Topic
        do {
            topic = try Topic(parsing: topicBytes)
        } catch {
            throw .invalidTopic(error)
        }
        guard limit > 0 else { throw .invalidLimit }
        return ReplayRequest(
            requestID: requestID, topic: topic, stream: stream == 0 ? nil : StreamID(stream), from: from,
            limit: limit)
    }

    /// The request id of a frame that starts like a request, even when the rest is malformed
    /// (so that the error reply can carry it); 0 otherwise.
    public static func requestID(ofMalformed frame: [UInt8]) -> UInt32 {
        guard frame.count >= 8, frame[0] == ReplayFormat.magic.0, frame[1] == ReplayFormat.magic.1 else {
            return 0
        }
        return frame[4..<8].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
