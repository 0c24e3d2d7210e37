public import KinesiaWire

/// One stream of one topic: a session's events from one run of its publisher.
public struct ReplayStreamKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The topic (`event/cam0/left/`).
    public var topic: Topic
    /// The publisher's stream id.
    public var stream: StreamID

    /// Makes a key.
    public init(topic: Topic, stream: StreamID) {
        self.topic = topic
        self.stream = stream
    }

    /// `"event/cam0/left/ 0123456789abcdef"`.
    public var description: String { "\(topic) \(stream)" }

    /// By topic, then stream.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.topic.string, lhs.stream) < (rhs.topic.string, rhs.stream)
    }
}
