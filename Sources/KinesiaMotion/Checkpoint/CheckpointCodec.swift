import Foundation

/// The byte encoding of checkpoints (``MotionAnalyzer/Checkpoint`` and any `Codable` value
/// built from them): JSON with sorted keys, deterministic and bit-exact for every double.
///
/// Finite doubles are written as their shortest round-trip decimal (`0.30000000000000004`,
/// `5e-324`, `-0`, `1.7976931348623157e+308`) and read back to the same bit pattern. An infinity
/// is written `"+inf"` or `"-inf"` and a NaN `"nan"` (the analysis keeps neither in its state,
/// and no output depends on a NaN's payload), so encoding never fails on a double. The same
/// value always gives the same bytes (keys sorted; the checkpoints hold no sets or
/// dictionaries in hash order).
///
/// ```swift
/// let bytes = try CheckpointCodec.encode(analyzer.checkpoint)
/// let checkpoint = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: bytes)
/// let restored = try MotionAnalyzer(exercise: .squat, side: .left, restoring: checkpoint)
/// ```
///
/// Framing (a length, a checksum, where the bytes live) is the caller's: a torn or corrupt
/// encoding throws ``CheckpointError/Kind/unreadable`` here, never traps, but bytes that happen
/// to decode are only as sound as what guards them.
public enum CheckpointCodec {
    /// The strings that stand for the non-finite doubles.
    private static let positiveInfinity = "+inf"
    private static let negativeInfinity = "-inf"
    private static let notANumber = "nan"

    /// Encodes `value` as JSON with sorted keys.
    /// - Parameter value: The value, usually a checkpoint.
    /// - Returns: The UTF-8 bytes of the JSON.
    /// - Throws: ``CheckpointError/Kind/unencodable`` when `value`'s own encoding fails (never
    ///   for the checkpoints of this package).
    public static func encode<T: Encodable>(_ value: T) throws(CheckpointError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: positiveInfinity, negativeInfinity: negativeInfinity, nan: notANumber)
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw CheckpointError(.unencodable, detail: "cannot encode \(T.self): \(error)")
        }
    }

    /// Decodes a `type` value from bytes that ``encode(_:)`` wrote.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - bytes: The encoding.
    /// - Returns: The value, with every double as it was encoded, bit for bit.
    /// - Throws: ``CheckpointError/Kind/unreadable`` when the bytes are not valid JSON of that
    ///   type (empty, truncated, corrupt, a key missing or of the wrong type).
    public static func decode<T: Decodable>(
        _ type: T.Type, from bytes: some Collection<UInt8>
    ) throws(CheckpointError) -> T {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: positiveInfinity, negativeInfinity: negativeInfinity, nan: notANumber)
        do {
            return try decoder.decode(type, from: Data(bytes))
        } catch {
            throw CheckpointError(
                .unreadable, detail: "not a \(T.self) checkpoint (\(bytes.count) bytes): \(error)")
        }
    }
}
