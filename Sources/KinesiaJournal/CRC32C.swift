import CKinesiaCRC32C

/// CRC-32C (Castagnoli), the checksum of every journal record.
///
/// The reflected polynomial `0x82F63B78`, initial value and final XOR `0xFFFFFFFF`: the CRC of
/// iSCSI, ext4 and SSE 4.2's `crc32` instruction, so any language's library checks a record.
/// Computed by the processor's `crc32` instruction where it has one (x86-64 with SSE 4.2: eight
/// bytes a cycle), otherwise eight bytes at a time with eight 256-entry tables ("slicing by 8").
/// Both give the same value.
///
/// ```swift
/// CRC32C.checksum(Array("123456789".utf8))   // 0xE3069283
/// var crc = CRC32C()
/// crc.update(header)
/// crc.update(body)
/// crc.value
/// ```
public struct CRC32C: Hashable, Sendable {
    /// How the checksum is computed.
    public enum Method: Hashable, Sendable {
        /// The processor's `crc32` instruction (x86-64 with SSE 4.2).
        case instruction
        /// Eight 256-entry tables, eight bytes at a time: any processor.
        case tables
    }

    /// Whether this processor has the `crc32` instruction.
    public static let isInstructionAvailable = kinesia_crc32c_hardware_available() != 0
    /// The fastest method this processor has: ``Method/instruction`` where it is available.
    public static var fastest: Method { isInstructionAvailable ? .instruction : .tables }

    /// The running state (before the final XOR).
    private var state: UInt32 = 0xFFFF_FFFF
    /// The method of this checksum.
    public let method: Method

    /// A checksum of nothing yet, computed by `method` (``Method/tables`` when the processor
    /// lacks the instruction).
    public init(method: Method = CRC32C.fastest) {
        self.method = method == .instruction && !Self.isInstructionAvailable ? .tables : method
    }

    /// The checksum of the bytes given so far.
    public var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// Adds `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        switch method {
        case .instruction: state = kinesia_crc32c_update(state, base, bytes.count)
        case .tables: updateByTables(bytes)
        }
    }

    private mutating func updateByTables(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        var index = 0
        let count = bytes.count
        Self.tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low =
                    crc
                    ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
                        | UInt32(bytes[index + 3]) << 24)
                let high =
                    UInt32(bytes[index + 4]) | UInt32(bytes[index + 5]) << 8 | UInt32(bytes[index + 6]) << 16
                    | UInt32(bytes[index + 7]) << 24
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        state = crc
    }

    /// Adds `bytes`.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The checksum of `bytes`, by `method`.
    public static func checksum(_ bytes: [UInt8], method: Method = CRC32C.fastest) -> UInt32 {
        var crc = CRC32C(method: method)
        crc.update(bytes)
        return crc.value
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// Table `k` (at `k * 256`) gives the CRC of a byte followed by `k` zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()
}
