/// A subscription prefix: ZeroMQ delivers every message whose topic frame starts with these
/// bytes.
///
/// Prefixes are built only from whole topic components, each ending with `/`, so a prefix for
/// camera `cam1` never matches camera `cam10`.
///
/// ```swift
/// try TopicPrefix.events(camera: "cam1").string   // "event/cam1/"
/// TopicPrefix.kind(.event).string                 // "event/"
/// TopicPrefix.everything.string                   // "" (every message)
/// ```
public struct TopicPrefix: Hashable, Sendable, CustomStringConvertible {
    /// The prefix's bytes, as given to `ZMQ_SUBSCRIBE`.
    public let bytes: [UInt8]

    init(validatedBytes: [UInt8]) {
        self.bytes = validatedBytes
    }

    /// Every message on the bus (the empty prefix).
    public static let everything = TopicPrefix(validatedBytes: [])

    /// Every topic of a kind: `"pose/"`, `"event/"`, `"snapshot/"` or `"health/"`.
    public static func kind(_ kind: Topic.Kind) -> TopicPrefix {
        TopicPrefix(validatedBytes: Array("\(kind.rawValue)/".utf8))
    }

    /// The poses of one camera: `"pose/<camera>/"`.
    /// - Throws: ``TopicError`` when the name is invalid.
    public static func poses(camera: String) throws(TopicError) -> TopicPrefix {
        try Topic.pose(camera: camera).prefix
    }

    /// The events of every session of one camera: `"event/<camera>/"`.
    /// - Throws: ``TopicError`` when the name is invalid.
    public static func events(camera: String) throws(TopicError) -> TopicPrefix {
        try Topic.validate(camera, as: .camera)
        return TopicPrefix(validatedBytes: Array("event/\(camera)/".utf8))
    }

    /// The snapshots of every session of one camera: `"snapshot/<camera>/"`.
    /// - Throws: ``TopicError`` when the name is invalid.
    public static func snapshots(camera: String) throws(TopicError) -> TopicPrefix {
        try Topic.validate(camera, as: .camera)
        return TopicPrefix(validatedBytes: Array("snapshot/\(camera)/".utf8))
    }

    /// Exactly one topic.
    /// Every run record of camera `camera`: `session/<camera>/`.
    /// - Throws: ``TopicError`` when the name is invalid.
    public static func runs(camera: String) throws(TopicError) -> TopicPrefix {
        try Topic.validate(camera, as: .camera)
        return TopicPrefix(validatedBytes: Array("session/\(camera)/".utf8))
    }

    public static func topic(_ topic: Topic) -> TopicPrefix { topic.prefix }

    /// The prefix as text.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The prefix as text (`""` for ``everything``).
    public var description: String { string }

    /// Whether ZeroMQ would deliver `topic` to a subscriber of this prefix.
    public func matches(_ topic: Topic) -> Bool { matches(topicFrame: topic.bytes) }

    /// Whether ZeroMQ would deliver a message whose first frame is `topicFrame`: a plain byte
    /// prefix comparison, as libzmq does it.
    public func matches(topicFrame: some Collection<UInt8>) -> Bool {
        topicFrame.count >= bytes.count && topicFrame.prefix(bytes.count).elementsEqual(bytes)
    }
}
