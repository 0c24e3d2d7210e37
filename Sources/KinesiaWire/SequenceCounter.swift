/// The sender's side of sequence numbers: the next number per topic, from 0.
///
/// ```swift
/// var counter = SequenceCounter<Topic>()
/// counter.next(for: topic)   // 0
/// counter.next(for: topic)   // 1
/// ```
public struct SequenceCounter<Key: Hashable & Sendable>: Sendable {
    private var next: [Key: UInt64] = [:]

    /// A counter at 0 for every topic.
    public init() {}

    /// The sequence number for the next message on `key`, and counts it.
    public mutating func next(for key: Key) -> UInt64 {
        let value = next[key, default: 0]
        next[key] = value &+ 1
        return value
    }

    /// The last sequence number handed out on `key`, or `nil` when none was.
    public func last(for key: Key) -> UInt64? {
        guard let value = next[key], value > 0 else { return nil }
        return value - 1
    }

    /// Makes `last` the last number handed out on `key` (`nil`: none), so the next is
    /// `last + 1`: a sender that resumes a stream after a restart carries on its numbers.
    public mutating func setLast(_ last: UInt64?, for key: Key) {
        next[key] = last.map { $0 &+ 1 }
    }
}
