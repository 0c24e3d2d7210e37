/// Reads the fields of a replay frame, checking the bounds of each.
struct ReplayFrameReader {
    let frame: [UInt8]
    let type: ReplayFormat.FrameType
    private var offset = 4

    init(_ frame: [UInt8], expecting types: Set<ReplayFormat.FrameType>) throws(ReplayFrameError) {
        guard frame.count >= 4 else { throw .truncated(needed: 4, available: frame.count) }
        guard frame[0] == ReplayFormat.magic.0, frame[1] == ReplayFormat.magic.1 else { throw .badMagic }
        guard frame[2] == ReplayFormat.version else { throw .unsupportedVersion(frame[2]) }
        guard let type = ReplayFormat.FrameType(rawValue: frame[3]), types.contains(type) else {
            throw .unexpectedType(frame[3])
        }
        self.frame = frame
        self.type = type
    }

    private mutating func take(_ count: Int) throws(ReplayFrameError) -> ArraySlice<UInt8> {
        guard frame.count - offset >= count else {
            throw .truncated(needed: offset + count, available: frame.count)
        }
        defer { offset += count }
        return frame[offset..<offset + count]
    }

    mutating func uint8() throws(ReplayFrameError) -> UInt8 { try take(1).first! }

    mutating func uint32() throws(ReplayFrameError) -> UInt32 {
        try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func uint64() throws(ReplayFrameError) -> UInt64 {
        try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func bytes(_ count: Int) throws(ReplayFrameError) -> [UInt8] { Array(try take(count)) }

    mutating func rest() -> [UInt8] {
        defer { offset = frame.count }
        return Array(frame[offset...])
    }

    func finish() throws(ReplayFrameError) {
        guard offset == frame.count else { throw .trailingBytes(count: frame.count - offset) }
    }
}
