import KinesiaJournal
import KinesiaTestSupport
import Testing

struct CRC32CTests {
    /// Every test runs with both methods (the instruction falls back to the tables on a
    /// processor without it, where both are the tables).
    static let methods: [CRC32C.Method] = [.instruction, .tables]

    @Test(arguments: methods)
    func checksOfTheStandardVectorIsE3069283(method: CRC32C.Method) {
        #expect(CRC32C.checksum(Array("123456789".utf8), method: method) == 0xE306_9283)
    }

    /// RFC 3720 (iSCSI), appendix B.4: 32 bytes of zeros, of 0xFF, ascending and descending.
    @Test(
        arguments: [
            ([UInt8](repeating: 0, count: 32), UInt32(0x8A91_36AA)),
            ([UInt8](repeating: 0xFF, count: 32), UInt32(0x62A8_AB43)),
            ((0..<32).map { UInt8($0) }, UInt32(0x46DD_794E)),
            ((0..<32).reversed().map { UInt8($0) }, UInt32(0x113F_DB5C)),
        ], methods)
    func matchesTheISCSIVectors(vector: ([UInt8], UInt32), method: CRC32C.Method) {
        #expect(CRC32C.checksum(vector.0, method: method) == vector.1)
    }

    @Test(arguments: methods)
    func anEmptyInputChecksToZero(method: CRC32C.Method) {
        #expect(CRC32C.checksum([], method: method) == 0)
    }

    @Test(arguments: methods)
    func updatesInPiecesEqualOneUpdate(method: CRC32C.Method) {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            var crc = CRC32C(method: method)
            crc.update(Array(bytes[..<split]))
            crc.update(Array(bytes[split...]))
            #expect(crc.value == CRC32C.checksum(bytes, method: method), "split at \(split)")
        }
    }

    /// The instruction and the tables agree on every length and alignment (a word read at an
    /// odd address, a tail of 1 to 7 bytes).
    @Test func theInstructionAndTheTablesAgreeAtEveryLengthAndAlignment() {
        var generator = SplitMix64(seed: 0x5EED)
        let bytes = (0..<600).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        bytes.withUnsafeBytes { all in
            for offset in 0..<9 {
                for length in 0...(all.count - offset) where length < 80 || length % 37 == 0 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    var instruction = CRC32C(method: .instruction)
                    instruction.update(slice)
                    var tables = CRC32C(method: .tables)
                    tables.update(slice)
                    #expect(instruction.value == tables.value, "offset \(offset), length \(length)")
                }
            }
        }
    }

    @Test func theJournalUsesTheInstructionOnAnX86Processor() {
        #if arch(x86_64)
            #expect(CRC32C.isInstructionAvailable)  // SSE 4.2: every x86-64 processor since 2008
            #expect(CRC32C().method == .instruction)
        #else
            #expect(CRC32C().method == CRC32C.fastest)
        #endif
    }
}
