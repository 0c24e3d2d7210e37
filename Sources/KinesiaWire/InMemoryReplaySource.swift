/// A ``ReplaySource`` that keeps the last `capacityPerStream` messages of each stream in
/// memory, in a ring: what a process serves before journals exist, and what tests use.
///
/// Messages must be appended in sequence order per stream, without holes (what a publisher's
/// ``WireEncoder`` produces); a message that breaks the order starts the stream's ring again at
/// its sequence number. Not thread-safe: append and serve on one thread.
///
/// ```swift
/// let source = InMemoryReplaySource(capacityPerStream: 100_000)
/// source.append(topic: topic, stream: stream, sequence: 0, frames: [topic.bytes, payload])
/// ```
public final class InMemoryReplaySource: ReplaySource {
    /// The default number of messages kept per stream.
    public static let defaultCapacityPerStream = 100_000

    private struct Key: Hashable {
        var topic: Topic
        var stream: StreamID
    }

    private struct Ring {
        var first: UInt64
        var entries: [[[UInt8]]] = []
        var head = 0  // index of `first` in `entries` once the ring is full

        var count: Int { entries.count }
        var last: UInt64 { first &+ UInt64(count) &- 1 }  // total: a ring may start at UInt64.max

        func frames(at sequence: UInt64) -> [[UInt8]] {
            entries[(head + Int(truncatingIfNeeded: sequence &- first)) % entries.count]
        }

        mutating func append(_ frames: [[UInt8]], capacity: Int) {
            if entries.count < capacity {
                entries.append(frames)
            } else {
                entries[head] = frames
                head = (head + 1) % entries.count
                first &+= 1
            }
        }
    }

    /// The most messages kept per stream.
    public let capacityPerStream: Int
    private var rings: [Key: Ring] = [:]
    private var current: [Topic: StreamID] = [:]
    private var order: [Key] = []

    /// Makes an empty source.
    public init(capacityPerStream: Int = defaultCapacityPerStream) {
        self.capacityPerStream = Swift.max(1, capacityPerStream)
    }

    /// Keeps one published message.
    public func append(topic: Topic, stream: StreamID, sequence: UInt64, frames: [[UInt8]]) {
        let key = Key(topic: topic, stream: stream)
        current[topic] = stream
        if var ring = rings[key], ring.last &+ 1 == sequence {
            rings[key] = nil  // unique reference: the append does not copy the ring
            ring.append(frames, capacity: capacityPerStream)
            rings[key] = ring
            return
        }
        if rings[key] == nil { order.append(key) }
        var ring = Ring(first: sequence)
        ring.append(frames, capacity: capacityPerStream)
        rings[key] = ring
    }

    /// Every stream held, in the order they first appeared.
    public func streams() -> [ReplayStreamInfo] {
        order.compactMap { key in
            rings[key].map {
                ReplayStreamInfo(topic: key.topic, stream: key.stream, first: $0.first, last: $0.last)
            }
        }
    }

    /// Where one stream stands.
    public func stream(topic: Topic, stream: StreamID?) -> ReplayStreamInfo? {
        guard let id = stream ?? current[topic], let ring = rings[Key(topic: topic, stream: id)] else {
            return nil
        }
        return ReplayStreamInfo(topic: topic, stream: id, first: ring.first, last: ring.last)
    }

    /// At most `limit` entries from `from`.
    public func entries(topic: Topic, stream: StreamID?, from: UInt64, limit: Int) throws(ReplaySourceError)
        -> [ReplayEntry]
    {
        guard let id = stream ?? current[topic], let ring = rings[Key(topic: topic, stream: id)] else {
            throw .unknownStream
        }
        guard from >= ring.first else { throw .notRetained(first: ring.first, last: ring.last) }
        guard from <= ring.last, limit > 0 else { return [] }
        // Total for any `from` a peer sends: the batch's last sequence saturates at UInt64.max.
        let (sum, overflow) = from.addingReportingOverflow(UInt64(limit) - 1)
        let end = Swift.min(ring.last, overflow ? UInt64.max : sum)
        return (from...end).map { ReplayEntry(sequence: $0, frames: ring.frames(at: $0)) }
    }
}
