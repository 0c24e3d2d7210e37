import KinesiaSystem

/// The fixed 28-byte header at the start of every payload.
///
/// | Offset | Size | Field | Encoding |
/// |-------:|-----:|-------|----------|
/// | 0 | 2 | magic | `0x4B 0x57` (`"KW"`) |
/// | 2 | 1 | version | `1` |
/// | 3 | 1 | ``kind`` | ``PayloadKind`` raw value |
/// | 4 | 8 | ``streamID`` | UInt64, little-endian |
/// | 12 | 8 | ``sequence`` | UInt64, little-endian |
/// | 20 | 8 | ``sentAt`` | UInt64 nanoseconds since the Unix epoch, little-endian |
///
/// ```swift
/// var counter = SequenceCounter<Topic>()
/// let header = WireHeader(kind: .pose, streamID: stream, sequence: counter.next(for: topic),
///                         sentAt: WireHeader.now())
/// ```
public struct WireHeader: Hashable, Sendable {
    /// What the body carries.
    public var kind: PayloadKind
    /// The sender's stream id (random per process start).
    public var streamID: StreamID
    /// The sender's sequence number on this topic, from 0, one more for every message.
    public var sequence: UInt64
    /// When the sender sent the message, in nanoseconds since the Unix epoch (wall clock:
    /// for latency figures and logs only, never for the analysis).
    public var sentAt: UInt64

    /// Creates a header.
    public init(kind: PayloadKind, streamID: StreamID, sequence: UInt64, sentAt: UInt64) {
        self.kind = kind
        self.streamID = streamID
        self.sequence = sequence
        self.sentAt = sentAt
    }

    /// The wall clock now, in nanoseconds since the Unix epoch (`CLOCK_REALTIME`).
    public static func now() -> UInt64 {
        WallClock.nanosecondsSinceEpoch
    }

    /// Reads and checks the header at the start of `payload`.
    ///
    /// - Throws: ``WireError/truncated(needed:available:)`` when the payload is shorter than the
    ///   header, ``WireError/badMagic``, ``WireError/unsupportedVersion(_:)``,
    ///   ``WireError/unknownKind(_:)``, or ``WireError/oversized(size:limit:)`` when the payload
    ///   is larger than its kind allows.
    public static func decode(from payload: UnsafeRawBufferPointer) throws(WireError) -> WireHeader {
        guard payload.count >= WireFormat.headerSize else {
            throw .truncated(needed: WireFormat.headerSize, available: payload.count)
        }
        guard payload[0] == WireFormat.magic.0, payload[1] == WireFormat.magic.1 else {
            throw .badMagic
        }
        guard payload[2] == WireFormat.version else { throw .unsupportedVersion(payload[2]) }
        guard let kind = PayloadKind(rawValue: payload[3]) else { throw .unknownKind(payload[3]) }
        guard payload.count <= kind.maximumPayloadSize else {
            throw .oversized(size: payload.count, limit: kind.maximumPayloadSize)
        }
        return WireHeader(
            kind: kind,
            streamID: StreamID(rawValue: payload.readUInt64(at: 4)),
            sequence: payload.readUInt64(at: 12),
            sentAt: payload.readUInt64(at: 20))
    }

    /// Reads and checks the header at the start of `payload`.
    /// - Throws: ``WireError``, as ``decode(from:)-(UnsafeRawBufferPointer)``.
    public static func decode(from payload: [UInt8]) throws(WireError) -> WireHeader {
        try payload.withBytes { (raw) throws(WireError) in try decode(from: raw) }
    }

    /// Writes the header into the first ``WireFormat/headerSize`` bytes of `buffer`, which must
    /// be at least that long.
    public func write(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= WireFormat.headerSize, "buffer shorter than the header")
        buffer[0] = WireFormat.magic.0
        buffer[1] = WireFormat.magic.1
        buffer[2] = WireFormat.version
        buffer[3] = kind.rawValue
        buffer.writeUInt64(streamID.rawValue, at: 4)
        buffer.writeUInt64(sequence, at: 12)
        buffer.writeUInt64(sentAt, at: 20)
    }

    /// The header's 28 bytes.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: WireFormat.headerSize) { buffer, count in
            write(into: UnsafeMutableRawBufferPointer(buffer))
            count = WireFormat.headerSize
        }
    }
}
