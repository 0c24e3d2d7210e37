/// The frame a pool worker's session sends after a message's payload: the epoch of the
/// assignment it runs under, for the broker to refuse what a fenced holder still sends.
///
/// Ten bytes, integers little-endian:
///
/// | Offset | Size | Field |
/// |-------:|-----:|-------|
/// | 0 | 2 | tag `4b 45` (`"KE"`) |
/// | 2 | 8 | epoch (UInt64) |
///
/// It travels only from a publisher to the broker: the broker reads it, refuses a message
/// whose epoch is below one it already forwarded on the same stream, and forwards the others
/// without it, so every reader still receives `[topic, payload]` (wire format, section 16).
///
/// ```swift
/// let frame = EpochFrame.encode(7)          // 4b 45 07 00 00 00 00 00 00 00
/// EpochFrame.decode(frame)                  // 7
/// ```
public enum EpochFrame {
    /// The frame's size in bytes.
    public static let size = 10
    /// The first two bytes: `"KE"`.
    public static let tag: (UInt8, UInt8) = (0x4B, 0x45)

    /// The frame that carries `epoch`.
    public static func encode(_ epoch: UInt64) -> [UInt8] {
        var frame: [UInt8] = [tag.0, tag.1]
        frame.reserveCapacity(size)
        for shift in stride(from: 0, to: 64, by: 8) {
            frame.append(UInt8(truncatingIfNeeded: epoch >> shift))
        }
        return frame
    }

    /// The epoch `frame` carries, or `nil` when it is not an epoch frame (another size or tag).
    public static func decode(_ frame: some Collection<UInt8>) -> UInt64? {
        guard frame.count == size else { return nil }
        var bytes = frame.makeIterator()
        guard bytes.next() == tag.0, bytes.next() == tag.1 else { return nil }
        var epoch: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { epoch |= UInt64(bytes.next()!) << shift }
        return epoch
    }
}
