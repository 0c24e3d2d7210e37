import KinesiaJournal
import Testing

struct CRC32CTests {
    @Test func checksOfTheStandardVectorIsE3069283() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }

    /// RFC 3720 (iSCSI), appendix B.4: 32 bytes of zeros, of 0xFF, ascending and descending.
    @Test(arguments: [
        ([UInt8](repeating: 0, count: 32), UInt32(0x8A91_36AA)),
        ([UInt8](repeating: 0xFF, count: 32), UInt32(0x62A8_AB43)),
        ((0..<32).map { UInt8($0) }, UInt32(0x46DD_794E)),
        ((0..<32).reversed().map { UInt8($0) }, UInt32(0x113F_DB5C)),
    ])
    func matchesTheISCSIVectors(bytes: [UInt8], expected: UInt32) {
        #expect(CRC32C.checksum(bytes) == expected)
    }

    @Test func anEmptyInputChecksToZero() {
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func updatesInPiecesEqualOneUpdate() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            var crc = CRC32C()
            crc.update(Array(bytes[..<split]))
            crc.update(Array(bytes[split...]))
            #expect(crc.value == CRC32C.checksum(bytes), "split at \(split)")
        }
    }
}
