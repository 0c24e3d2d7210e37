/// A stable 64-bit digest of an analysis' configuration (an exercise with its thresholds, a
/// side, an analytics' rules), stored in a checkpoint so that restoring it under another
/// configuration is refused.
///
/// The configuration itself is not stored: a restored analysis re-derives it from the exercise
/// and side it is given, and the fingerprints must match. The digest is FNV-1a over a canonical
/// byte form of the values (a double's bit pattern, an integer's 64 bits, a string's length and
/// UTF-8 bytes), the same on every platform and in every process (unlike `Hasher`, which is
/// seeded per process).
///
/// ```swift
/// var fingerprint = CheckpointFingerprint(Exercise.squat)
/// fingerprint.combine(20.0)   // another component's threshold
/// ```
public struct CheckpointFingerprint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The digest.
    public private(set) var value: UInt64

    /// The FNV-1a 64-bit offset basis and prime.
    private static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// An empty digest.
    public init() {
        value = Self.offsetBasis
    }

    /// The digest of `exercise`: its id, view, measure, counting rule, form rules and every
    /// session rule.
    /// - Parameter exercise: The exercise, with its thresholds.
    public init(_ exercise: Exercise) {
        self.init()
        combine(exercise)
    }

    /// Adds the 64 bits of `value`.
    public mutating func combine(_ value: UInt64) {
        var bits = value
        for _ in 0..<8 {
            self.value = (self.value ^ (bits & 0xff)) &* Self.prime
            bits >>= 8
        }
    }

    /// Adds an integer.
    public mutating func combine(_ value: Int) {
        combine(UInt64(bitPattern: Int64(value)))
    }

    /// Adds a double's bit pattern (`-0.0` and `0.0` differ).
    public mutating func combine(_ value: Double) {
        combine(value.bitPattern)
    }

    /// Adds a string: its length, then its UTF-8 bytes.
    public mutating func combine(_ value: String) {
        combine(value.utf8.count)
        for byte in value.utf8 {
            self.value = (self.value ^ UInt64(byte)) &* Self.prime
        }
    }

    /// The digest in hexadecimal, 16 digits.
    public var description: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
