/// Appends the little-endian fields of a replay frame.
struct ReplayFrameWriter {
    var bytes: [UInt8]

    init(type: ReplayFormat.FrameType) {
        bytes = [ReplayFormat.magic.0, ReplayFormat.magic.1, ReplayFormat.version, type.rawValue]
    }

    mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}
