public import KinesiaWire

/// One journaled stream: a topic and the stream id of the sender that published on it.
///
/// In a store it is the directory `<topic>/<stream>/`: the topic with each `/` as `+` (names
/// never hold a `+`: `event+cam0+left`), then the stream id's 16 hex digits.
///
/// ```swift
/// let stream = JournalStream(topic: try Topic.pose(camera: "cam0"), streamID: StreamID(0x2a))
/// stream.topicDirectoryName    // "pose+cam0"
/// stream.streamDirectoryName   // "000000000000002a"
/// ```
public struct JournalStream: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The topic the records were published on.
    public var topic: Topic
    /// The publisher's stream id.
    public var streamID: StreamID

    /// Names a stream.
    public init(topic: Topic, streamID: StreamID) {
        self.topic = topic
        self.streamID = streamID
    }

    /// The topic's directory name: the topic with `/` as `+`, without the last one.
    public var topicDirectoryName: String {
        String(topic.string.dropLast().map { $0 == "/" ? "+" : $0 })
    }

    /// The stream's directory name: 16 lowercase hex digits.
    public var streamDirectoryName: String { streamID.description }

    /// The topic a directory name stands for, or `nil`.
    public static func topic(directoryName name: String) -> Topic? {
        guard !name.contains("/") else { return nil }
        return try? Topic(parsing: name.map { $0 == "+" ? "/" : $0 } + "/")
    }

    /// The stream id a directory name stands for, or `nil`.
    public static func streamID(directoryName name: String) -> StreamID? {
        guard name.count == 16, let value = UInt64(name, radix: 16), value != 0 else { return nil }
        return StreamID(value)
    }

    /// `pose/cam0/ stream 000000000000002a`.
    public var description: String { "\(topic) stream \(streamID)" }

    /// Orders by topic text, then stream id.
    public static func < (lhs: JournalStream, rhs: JournalStream) -> Bool {
        (lhs.topic.string, lhs.streamID.rawValue) < (rhs.topic.string, rhs.streamID.rawValue)
    }
}

/// One journaled message: its sequence number and the exact ZeroMQ frames published.
public struct JournalEntry: Hashable, Sendable {
    /// The sequence number of the message on its stream.
    public var sequence: UInt64
    /// The frames, byte for byte as published (topic, then the wire payload).
    public var frames: [[UInt8]]

    /// Makes an entry.
    public init(sequence: UInt64, frames: [[UInt8]]) {
        self.sequence = sequence
        self.frames = frames
    }
}

/// Segment file names: the first sequence number in 20 decimal digits, then `.journal`.
enum SegmentName {
    static let suffix = ".journal"

    static func name(firstSequence: UInt64) -> String {
        let digits = String(firstSequence)
        return String(repeating: "0", count: 20 - digits.count) + digits + suffix
    }

    static func firstSequence(_ name: String) -> UInt64? {
        guard name.hasSuffix(suffix), name.count == 20 + suffix.count else { return nil }
        return UInt64(name.dropLast(suffix.count))
    }

    /// The segment names among `names`, in sequence order.
    static func sorted(_ names: [String]) -> [String] {
        names.compactMap { name in firstSequence(name).map { (name, $0) } }.sorted { $0.1 < $1.1 }.map(\.0)
    }
}
