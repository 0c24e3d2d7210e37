/// The identity of one run of a sender: a random 64-bit number drawn at process start.
///
/// A receiver that sees a new stream id on a topic knows the sender restarted (its sequence
/// numbers start over), which is not a gap.
///
/// ```swift
/// let stream = StreamID.random()
/// print(stream)   // "9f3c2a51d04e7b18"
/// ```
public struct StreamID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The id as sent on the wire (little-endian UInt64 at header offset 4).
    public var rawValue: UInt64

    /// Wraps a raw id.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Wraps a raw id.
    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// A fresh random id (never zero) from the system's random source.
    public static func random() -> StreamID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A random id (never zero) from `generator`, for deterministic tests.
    public static func random(using generator: inout some RandomNumberGenerator) -> StreamID {
        StreamID(rawValue: UInt64.random(in: 1...UInt64.max, using: &generator))
    }

    /// The id as 16 lowercase hex digits.
    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Orders by raw value.
    public static func < (lhs: StreamID, rhs: StreamID) -> Bool { lhs.rawValue < rhs.rawValue }
}
