public import KinesiaMotion

/// A whole bus message, both frames decoded: the topic, the header and the body.
///
/// ```swift
/// let message = try WireMessage.decode(topic: frames[0], payload: frames[1])
/// switch message.body {
/// case .pose(let pose): session.process(pose)
/// case .event(let json): print(json)
/// default: break
/// }
/// ```
public struct WireMessage: Sendable, Equatable {
    /// What a message carries.
    public enum Body: Sendable, Equatable {
        /// A pose.
        case pose(Pose)
        /// An event, as JSON text.
        case event(json: String)
        /// A snapshot, as JSON text.
        case snapshot(json: String)
        /// A health report.
        case health(HealthReport)
        /// A session's run record (`runStarted`, `runEnded`), as sent.
        case session(json: String)

        /// The payload kind of this body.
        public var kind: PayloadKind {
            switch self {
            case .pose: .pose
            case .event: .event
            case .snapshot: .snapshot
            case .health: .health
            case .session: .session
            }
        }
    }

    /// The topic (first frame).
    public var topic: Topic
    /// The payload's header.
    public var header: WireHeader
    /// The payload's body.
    public var body: Body

    /// Creates a message. `header.kind` should match `body.kind`; ``encode()`` checks it.
    public init(topic: Topic, header: WireHeader, body: Body) {
        self.topic = topic
        self.header = header
        self.body = body
    }

    /// Decodes both frames and checks that the topic's kind matches the payload's.
    /// - Throws: ``WireError/invalidTopic(_:)``, ``WireError/topicMismatch(topic:payload:)``,
    ///   and every error of ``PoseCodec`` and ``JSONPayloadCodec``; ``WireError/invalidJSON(_:)``
    ///   for a health report that does not decode.
    public static func decode(topic: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)
        throws(WireError) -> WireMessage
    {
        let (parsed, header) = try decodeEnvelope(topic: topic, payload: payload)
        switch header.kind {
        case .pose:
            let (header, pose) = try PoseCodec.decode(payload)
            return WireMessage(topic: parsed, header: header, body: .pose(pose))
        case .event:
            let (header, json) = try JSONPayloadCodec.decode(payload)
            return WireMessage(topic: parsed, header: header, body: .event(json: json))
        case .snapshot:
            let (header, json) = try JSONPayloadCodec.decode(payload)
            return WireMessage(topic: parsed, header: header, body: .snapshot(json: json))
        case .health:
            let (header, json) = try JSONPayloadCodec.decode(payload)
            return WireMessage(topic: parsed, header: header, body: .health(try HealthReport(json: json)))
        case .session:
            let (header, json) = try JSONPayloadCodec.decode(payload)
            return WireMessage(topic: parsed, header: header, body: .session(json: json))
        }
    }

    /// Decodes the topic and the payload's header only, and checks that their kinds match:
    /// the first step of ``decode(topic:payload:)-(UnsafeRawBufferPointer,_)``, for a receiver
    /// that decodes the body itself (a pose into a ``FlatPose`` with
    /// ``PoseCodec/decode(_:into:)-(UnsafeRawBufferPointer,_)``).
    /// - Throws: ``WireError/invalidTopic(_:)``, ``WireError/topicMismatch(topic:payload:)``
    ///   and the header's errors.
    public static func decodeEnvelope(topic: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)
        throws(WireError) -> (topic: Topic, header: WireHeader)
    {
        let parsed: Topic
        do {
            parsed = try Topic(parsing: topic)
        } catch {
            throw .invalidTopic(error)
        }
        let header = try WireHeader.decode(from: payload)
        guard parsed.kind.payloadKind == header.kind else {
            throw .topicMismatch(topic: parsed.kind, payload: header.kind)
        }
        return (parsed, header)
    }

    /// Decodes both frames.
    /// - Throws: ``WireError``, as ``decode(topic:payload:)-(UnsafeRawBufferPointer,_)``.
    public static func decode(topic: [UInt8], payload: [UInt8]) throws(WireError) -> WireMessage {
        try topic.withBytes { (topicBytes) throws(WireError) in
            try payload.withBytes { (payloadBytes) throws(WireError) in
                try decode(topic: topicBytes, payload: payloadBytes)
            }
        }
    }

    /// The two frames: the topic's bytes and the payload.
    /// - Throws: ``WireError/topicMismatch(topic:payload:)`` when the topic, the header and the
    ///   body disagree on the kind, and the encoders' errors.
    public func encode() throws(WireError) -> (topic: [UInt8], payload: [UInt8]) {
        guard topic.kind.payloadKind == body.kind else {
            throw .topicMismatch(topic: topic.kind, payload: body.kind)
        }
        guard header.kind == body.kind else { throw .unexpectedKind(header.kind) }
        let payload: [UInt8]
        switch body {
        case .pose(let pose): payload = try PoseCodec.encode(pose, header: header)
        case .event(let json), .snapshot(let json), .session(let json):
            payload = try JSONPayloadCodec.encode(json: json, header: header)
        case .health(let report): payload = try JSONPayloadCodec.encode(json: report.json(), header: header)
        }
        return (topic.bytes, payload)
    }
}
