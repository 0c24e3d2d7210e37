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
    /// What the encoder keeps of one topic; one dictionary lookup per message.
    private struct TopicSlot: Sendable {
        /// The next sequence number.
        var next: UInt64 = 0
        /// The topic's own stream (``continueStream(_:on:after:)``), else `nil`.
        var stream: StreamID?
        /// The topic's first frame, made once.
        var bytes: [UInt8]
    }
    private var slots: [Topic: TopicSlot] = [:]
    /// The last topic encoded and its slot's place: a sender that sends on one topic (a
    /// camera's ingest) or in runs (a session's snapshots) compares one digest instead of
    /// hashing. An index stays valid until a topic is added, which forgets it.
    private var lastSlot: (topic: Topic, index: Dictionary<Topic, TopicSlot>.Index)?

    /// Creates an encoder.
    /// - Parameter streamID: The stream id; a fresh random one by default (one per process
    ///   start).
    public init(streamID: StreamID = .random()) {
        self.streamID = streamID
    }

    /// The last sequence number sent on `topic`, or `nil` when nothing was.
    public func lastSequence(on topic: Topic) -> UInt64? {
        guard let next = slots[topic]?.next, next > 0 else { return nil }
        return next - 1
    }

    /// The stream id of the messages on `topic`: ``streamID`` unless
    /// ``continueStream(_:on:after:)`` gave the topic its own.
    public func streamID(on topic: Topic) -> StreamID {
        slots[topic]?.stream ?? streamID
    }

    /// Sends `topic`'s messages on the stream `stream`, numbered on from `lastSequence` (the
    /// next is `lastSequence + 1`; `nil`: from 0): a sender whose stream identity survives its
    /// restarts (a journaled worker session, a camera) resumes the stream it had.
    public mutating func continueStream(_ stream: StreamID, on topic: Topic, after lastSequence: UInt64?) {
        lastSlot = nil
        slots[topic, default: TopicSlot(bytes: topic.bytes)].stream = stream
        slots[topic]!.next = lastSequence.map { $0 &+ 1 } ?? 0
    }

    /// The slot of `topic`, made on its first message.
    private mutating func slotIndex(_ topic: Topic) -> Dictionary<Topic, TopicSlot>.Index {
        if let lastSlot, lastSlot.topic == topic { return lastSlot.index }
        let index: Dictionary<Topic, TopicSlot>.Index
        if let found = slots.index(forKey: topic) {
            index = found
        } else {
            slots[topic] = TopicSlot(bytes: topic.bytes)
            index = slots.index(forKey: topic)!
        }
        lastSlot = (topic, index)
        return index
    }

    /// Writes the next message of `topic` with `write`, given its header, then counts it (a
    /// message that `write` refuses does not use its number).
    /// - Returns: The header written, and the topic's first frame.
    private mutating func encodeNext(
        on topic: Topic, sentAt: UInt64, _ write: (WireHeader) throws(WireError) -> Void
    ) throws(WireError) -> (header: WireHeader, topic: [UInt8]) {
        let index = slotIndex(topic)
        let slot = slots.values[index]
        let header = WireHeader(
            kind: topic.kind.payloadKind, streamID: slot.stream ?? streamID, sequence: slot.next,
            sentAt: sentAt)
        try write(header)
        slots.values[index].next &+= 1
        return (header, slot.bytes)
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
        return try encodeNext(on: topic, sentAt: sentAt) { (header) throws(WireError) in
            try PoseCodec.encode(pose, header: header, into: &buffer)
        }.header
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
        try encodeNext(on: topic, sentAt: sentAt) { (header) throws(WireError) in
            try JSONPayloadCodec.encode(json: json, header: header, into: &buffer)
        }.header
    }

    /// Encodes a pose for `topic` as a whole message: `frames[0]` becomes the topic's bytes
    /// (made once per topic, shared after), `frames[1]` the payload, its storage reused. Throws
    /// as ``encode(_:on:into:sentAt:)``.
    @discardableResult
    public mutating func encode(
        _ pose: Pose, on topic: Topic, frames: inout [[UInt8]], sentAt: UInt64 = WireHeader.now()
    ) throws(WireError) -> WireHeader {
        precondition(frames.count == 2, "a message is two frames: topic, payload")
        guard topic.kind == .pose else { throw .topicMismatch(topic: topic.kind, payload: .pose) }
        let (header, bytes) = try encodeNext(on: topic, sentAt: sentAt) { (header) throws(WireError) in
            try PoseCodec.encode(pose, header: header, into: &frames[1])
        }
        frames[0] = bytes
        return header
    }

    /// Encodes JSON for `topic` as a whole message, as ``encode(_:on:frames:sentAt:)`` does a
    /// pose. Throws as ``encode(json:on:into:sentAt:)``.
    @discardableResult
    public mutating func encode(
        json: [UInt8], on topic: Topic, frames: inout [[UInt8]], sentAt: UInt64 = WireHeader.now()
    ) throws(WireError) -> WireHeader {
        precondition(frames.count == 2, "a message is two frames: topic, payload")
        let (header, bytes) = try encodeNext(on: topic, sentAt: sentAt) { (header) throws(WireError) in
            try JSONPayloadCodec.encode(json: json, header: header, into: &frames[1])
        }
        frames[0] = bytes
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
