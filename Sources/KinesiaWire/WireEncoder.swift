public import KinesiaMotion

/// A sender's encoder: its stream id, the next sequence number of every topic, and the send
/// time, so that a publisher only says what to send and where.
///
/// A message that fails to encode does not consume a sequence number: receivers never see a
/// gap for a message that was never sent.
///
/// ```swift
/// var encoder = WireEncoder()               // a fresh random stream id
/// var buffer: [UInt8] = []
/// let topic = try Topic.pose(camera: "cam0")
/// try encoder.encode(pose, on: topic, into: &buffer)
/// socket.send([topic.bytes, buffer])
/// ```
public struct WireEncoder: Sendable {
    /// This sender's stream id, in every header it writes.
    public let streamID: StreamID
    private var counter = SequenceCounter<Topic>()
    /// Topics whose stream was set by ``continueStream(_:on:after:)`` (a persistent identity).
    private var topicStreams: [Topic: StreamID] = [:]

    /// Creates an encoder.
    /// - Parameter streamID: The stream id; a fresh random one by default (one per process
    ///   start).
    public init(streamID: StreamID = .random()) {
        self.streamID = streamID
    }

    /// The last sequence number sent on `topic`, or `nil` when nothing was.
    public func lastSequence(on topic: Topic) -> UInt64? { counter.last(for: topic) }

    /// The stream id of the messages on `topic`: ``streamID`` unless
    /// ``continueStream(_:on:after:)`` gave the topic its own.
    public func streamID(on topic: Topic) -> StreamID {
        topicStreams.isEmpty ? streamID : topicStreams[topic] ?? streamID
    }

    /// Sends `topic`'s messages on the stream `stream`, numbered on from `lastSequence` (the
    /// next is `lastSequence + 1`; `nil`: from 0): a sender whose stream identity survives its
    /// restarts (a journaled worker session, a camera) resumes the stream it had.
    public mutating func continueStream(_ stream: StreamID, on topic: Topic, after lastSequence: UInt64?) {
        topicStreams[topic] = stream
        counter.setLast(lastSequence, for: topic)
    }

    /// Encodes a pose for `topic` (a `pose/` topic) into `buffer`, reusing its storage.
    /// - Parameters:
    ///   - sentAt: The send time in nanoseconds since the Unix epoch; now by default.
    /// - Returns: The header written.
    /// - Throws: ``WireError/topicMismatch(topic:payload:)`` for a topic of another kind, and
    ///   the errors of ``PoseCodec``; the sequence number is then not used.
    @discardableResult
    public mutating func encode(
        _ pose: Pose, on topic: Topic, into buffer: inout [UInt8], sentAt: UInt64 = WireHeader.now()
    ) throws(WireError) -> WireHeader {
        guard topic.kind == .pose else { throw .topicMismatch(topic: topic.kind, payload: .pose) }
        var header = WireHeader(kind: .pose, streamID: streamID(on: topic), sequence: 0, sentAt: sentAt)
        header.sequence = (counter.last(for: topic)).map { $0 &+ 1 } ?? 0
        try PoseCodec.encode(pose, header: header, into: &buffer)
        _ = counter.next(for: topic)
        return header
    }

    /// Encodes JSON (an event, a snapshot or a health report, after the topic's kind) for
    /// `topic` into `buffer`, reusing its storage.
    /// - Returns: The header written.
    /// - Throws: ``WireError/unexpectedKind(_:)`` for a `pose/` topic, and the errors of
    ///   ``JSONPayloadCodec``; the sequence number is then not used.
    @discardableResult
    public mutating func encode(
        json: [UInt8], on topic: Topic, into buffer: inout [UInt8], sentAt: UInt64 = WireHeader.now()
    ) throws(WireError) -> WireHeader {
        let kind = topic.kind.payloadKind
        let sequence = (counter.last(for: topic)).map { $0 &+ 1 } ?? 0
        let header = WireHeader(kind: kind, streamID: streamID(on: topic), sequence: sequence, sentAt: sentAt)
        try JSONPayloadCodec.encode(json: json, header: header, into: &buffer)
        _ = counter.next(for: topic)
        return header
    }

    /// Encodes a health report for a `health/` topic into `buffer`.
    /// - Returns: The header written.
    /// - Throws: ``WireError/topicMismatch(topic:payload:)`` for a topic of another kind, and
    ///   the errors of ``HealthReport/json()`` and ``JSONPayloadCodec``.
    @discardableResult
    public mutating func encode(
        _ report: HealthReport, on topic: Topic, into buffer: inout [UInt8], sentAt: UInt64 = WireHeader.now()
    ) throws(WireError) -> WireHeader {
        guard topic.kind == .health else { throw .topicMismatch(topic: topic.kind, payload: .health) }
        return try encode(json: report.json(), on: topic, into: &buffer, sentAt: sentAt)
    }
}
