/// One message as its publisher sent it: its sequence number and its frames, byte for byte.
public struct ReplayEntry: Hashable, Sendable {
    /// The sequence number in its stream.
    public var sequence: UInt64
    /// The frames as published (`[topic, payload]`).
    public var frames: [[UInt8]]

    /// Makes an entry.
    public init(sequence: UInt64, frames: [[UInt8]]) {
        self.sequence = sequence
        self.frames = frames
    }
}

/// Where one stream stands in a ``ReplaySource``.
public struct ReplayStreamInfo: Hashable, Sendable {
    /// The topic.
    public var topic: Topic
    /// The publisher's stream id.
    public var stream: StreamID
    /// The first sequence number still held.
    public var first: UInt64
    /// The last sequence number published (and held).
    public var last: UInt64

    /// Makes a value.
    public init(topic: Topic, stream: StreamID, first: UInt64, last: UInt64) {
        self.topic = topic
        self.stream = stream
        self.first = first
        self.last = last
    }
}

/// Why a ``ReplaySource`` cannot serve a read.
public enum ReplaySourceError: Error, Hashable, Sendable {
    /// No such stream for the topic.
    case unknownStream
    /// The sequence asked for is older than the first one held.
    case notRetained(first: UInt64, last: UInt64)
}

/// What a ``ReplayServer`` (in `KinesiaClient`) serves: the messages a process published, per
/// topic and stream, from a sequence number on.
///
/// ``InMemoryReplaySource`` keeps the last messages of each stream in memory; a journal on disk
/// conforms in the same way. Implementations are used on one thread (the server's); they need
/// not be `Sendable`.
///
/// ```swift
/// let source = InMemoryReplaySource(capacityPerStream: 100_000)
/// source.append(topic: topic, stream: publisher.streamID, sequence: 0, frames: [topic.bytes, payload])
/// let batch = try source.entries(topic: topic, stream: nil, from: 0, limit: 256)
/// ```
public protocol ReplaySource: AnyObject {
    /// Every stream held, with its first and last sequence numbers.
    func streams() -> [ReplayStreamInfo]

    /// Where one stream stands; `stream` `nil` means the stream held now for `topic` (the
    /// newest, when a process holds several).
    func stream(topic: Topic, stream: StreamID?) -> ReplayStreamInfo?

    /// At most `limit` entries of the stream, in order, from the sequence number `from` (fewer
    /// at the end of the stream; none when `from` is past its last).
    /// - Throws: ``ReplaySourceError/unknownStream``, or
    ///   ``ReplaySourceError/notRetained(first:last:)`` when `from` is older than what is held.
    func entries(topic: Topic, stream: StreamID?, from: UInt64, limit: Int) throws(ReplaySourceError)
        -> [ReplayEntry]
}
