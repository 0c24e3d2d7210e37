/// The byte layout of journal segments and records: what ``JournalWriter`` appends and
/// ``SegmentScan`` reads back. Pure functions over bytes, no I/O.
///
/// A segment file starts with the 8-byte ``segmentMagic`` (`KJOURNL` and the format version,
/// 1). Records follow, back to back, all integers little-endian:
///
/// | Offset | Size | Field |
/// |---|---|---|
/// | 0 | 4 | body length `L` (bytes after this 8-byte record header) |
/// | 4 | 4 | CRC-32C (``CRC32C``) of the 4 length bytes, then of the `L` body bytes |
/// | 8 | 8 | sequence number |
/// | 16 | 4 | frame count `n` |
/// | 20 | ... | `n` times: frame length (4 bytes), then the frame's bytes |
///
/// The frames are the ZeroMQ frames the process published (topic, then wire payload), byte
/// for byte, so a replay sends identical messages. A body shorter than 12 bytes or longer than
/// ``maximumBodyLength``, a CRC that does not match, or frame lengths that do not add up to
/// the body make a record invalid.
public enum JournalRecord {
    /// The first 8 bytes of every segment: `KJOURNL` and the format version (1).
    public static let segmentMagic: [UInt8] = Array("KJOURNL".utf8) + [1]
    /// The record header: body length and CRC.
    public static let headerSize = 8
    /// The smallest body: a sequence number and a frame count of zero.
    public static let minimumBodyLength = 12
    /// The largest body accepted (64 MiB): a longer length field is damage.
    public static let maximumBodyLength = 64 << 20

    /// The size on disk of a record holding `frames`.
    public static func encodedSize(of frames: [[UInt8]]) -> Int {
        var size = headerSize + minimumBodyLength
        for frame in frames { size += 4 + frame.count }
        return size
    }

    /// Writes the record for `sequence` and `frames` into `buffer`, replacing its contents
    /// (its storage is reused).
    ///
    /// - Throws: ``JournalError/recordTooLarge(_:)`` when the body would exceed
    ///   ``maximumBodyLength``.
    public static func encode(sequence: UInt64, frames: [[UInt8]], into buffer: inout [UInt8])
        throws(JournalError)
    {
        buffer.removeAll(keepingCapacity: true)
        try encode(sequence: sequence, frames: frames, appendingTo: &buffer)
    }

    /// Appends the record for `sequence` and `frames` to `buffer` (a batch of records written
    /// at once).
    ///
    /// - Throws: ``JournalError/recordTooLarge(_:)`` when the body would exceed
    ///   ``maximumBodyLength`` (`buffer` is left as it was).
    public static func encode(sequence: UInt64, frames: [[UInt8]], appendingTo buffer: inout [UInt8])
        throws(JournalError)
    {
        let size = encodedSize(of: frames)
        guard size - headerSize <= maximumBodyLength else { throw .recordTooLarge(size - headerSize) }
        let start = buffer.count
        // Grown geometrically: a batch of appends never reallocates per record.
        if buffer.capacity < start + size { buffer.reserveCapacity(max(start + size, 2 * buffer.capacity)) }
        append(UInt32(size - headerSize), to: &buffer)
        append(UInt32(0), to: &buffer)
        append(sequence, to: &buffer)
        appendFrames(frames, to: &buffer)
        sealRecord(at: start, in: &buffer)
    }

    /// Appends `frames` as a record body lays them out after its sequence number (the frame
    /// count, then each frame's length and bytes): what
    /// ``encode(sequence:encodedFrames:appendingTo:)`` takes.
    public static func appendFrames(_ frames: [[UInt8]], to buffer: inout [UInt8]) {
        append(UInt32(frames.count), to: &buffer)
        for frame in frames {
            append(UInt32(frame.count), to: &buffer)
            buffer.append(contentsOf: frame)
        }
    }

    /// Appends the record for `sequence` whose frames are already laid out as a body holds them
    /// (``appendFrames(_:to:)``).
    ///
    /// - Throws: ``JournalError/recordTooLarge(_:)`` when the body would exceed
    ///   ``maximumBodyLength`` (`buffer` is left as it was).
    public static func encode(
        sequence: UInt64, encodedFrames: UnsafeRawBufferPointer, appendingTo buffer: inout [UInt8]
    ) throws(JournalError) {
        let bodyLength = 8 + encodedFrames.count
        guard bodyLength <= maximumBodyLength else { throw .recordTooLarge(bodyLength) }
        let start = buffer.count
        let size = headerSize + bodyLength
        if buffer.capacity < start + size { buffer.reserveCapacity(max(start + size, 2 * buffer.capacity)) }
        append(UInt32(bodyLength), to: &buffer)
        append(UInt32(0), to: &buffer)
        append(sequence, to: &buffer)
        buffer.append(contentsOf: encodedFrames)
        sealRecord(at: start, in: &buffer)
    }

    /// Writes the CRC of the record that starts at `start` and runs to the end of `buffer`.
    private static func sealRecord(at start: Int, in buffer: inout [UInt8]) {
        let crc = buffer.withUnsafeBytes { bytes in
            var crc = CRC32C()
            crc.update(UnsafeRawBufferPointer(rebasing: bytes[start..<start + 4]))
            crc.update(UnsafeRawBufferPointer(rebasing: bytes[(start + headerSize)...]))
            return crc.value
        }
        buffer.withUnsafeMutableBytes {
            $0.storeBytes(of: crc.littleEndian, toByteOffset: start + 4, as: UInt32.self)
        }
    }

    /// What is at an offset of a segment.
    public enum Decoded: Hashable, Sendable {
        /// A valid record of `size` bytes (header included).
        case record(sequence: UInt64, size: Int)
        /// Fewer bytes remain than the record needs (a write cut short, or still under way).
        case incomplete
        /// Not a valid record: a length out of range, a CRC or frame layout that does not match.
        case invalid
    }

    /// Checks the record at `offset` of `bytes`.
    public static func check(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Decoded {
        let remaining = bytes.count - offset
        guard remaining >= headerSize else { return .incomplete }
        let length = Int(load(UInt32.self, bytes, offset))
        guard length >= minimumBodyLength, length <= maximumBodyLength else { return .invalid }
        guard remaining >= headerSize + length else { return .incomplete }
        var crc = CRC32C()
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 4]))
        let body = offset + headerSize
        crc.update(UnsafeRawBufferPointer(rebasing: bytes[body..<body + length]))
        guard crc.value == load(UInt32.self, bytes, offset + 4) else { return .invalid }
        // The frames must fill the body exactly.
        let count = Int(load(UInt32.self, bytes, body + 8))
        var position = body + 12
        let end = body + length
        for _ in 0..<min(count, length) {
            guard end - position >= 4 else { return .invalid }
            let frame = Int(load(UInt32.self, bytes, position))
            guard frame <= end - position - 4 else { return .invalid }
            position += 4 + frame
        }
        guard count <= length, position == end else { return .invalid }
        return .record(sequence: load(UInt64.self, bytes, body), size: headerSize + length)
    }

    /// The frames of the valid record at `offset` (checked by ``check(_:at:)`` first).
    public static func frames(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> [[UInt8]] {
        let body = offset + headerSize
        let count = Int(load(UInt32.self, bytes, body + 8))
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        var position = body + 12
        for _ in 0..<count {
            let length = Int(load(UInt32.self, bytes, position))
            frames.append(Array(bytes[(position + 4)..<(position + 4 + length)]))
            position += 4 + length
        }
        return frames
    }

    private static func load<T: FixedWidthInteger>(
        _ type: T.Type, _ bytes: UnsafeRawBufferPointer, _ offset: Int
    )
        -> T
    {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }
}
