import Foundation
import Glibc
import KinesiaWire
import Testing

@testable import KinesiaJournal

/// A reader opens a long stream by its ends: the first and the last segment are read and
/// checked, the ones between when a read reaches them. So the first replay request for a
/// long stream (or a reader following one) never reads all of it at once.
struct JournalReaderLazyScanTests {
    private func withStream(segments count: Int, _ body: (JournalStore, [String]) throws -> Void) throws {
        let root = JournalFixtures.temporaryDirectory()
        defer { JournalFixtures.remove(root) }
        // 10 records of 40 bytes a segment.
        let store = try JournalStore(
            directory: root + "/state/journal", policy: JournalPolicy(sync: .never, segmentBytes: 700))
        try JournalFixtures.journal(0..<UInt64(count * 10), in: store)
        let files = JournalFixtures.segments(store)
        try #require(files.count >= count - 1)
        try body(store, files)
    }

    @Test func aMiddleSegmentIsCheckedWhenAReadReachesItNotWhenTheReaderOpens() throws {
        try withStream(segments: 30) { store, files in
            // A flipped byte in a record in the middle of the stream.
            let middle = files[files.count / 2]
            var bytes = JournalFixtures.bytes(middle)
            bytes[JournalRecord.segmentMagic.count + 30] ^= 0xFF
            JournalFixtures.write(bytes, to: middle)

            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.firstSequence == 0)
            let last = try #require(reader.lastSequence)
            #expect(reader.damageFound.isEmpty)
            // Reading it all finds the damage, and serves every other record.
            let all = try reader.allEntries().map(\.sequence)
            #expect(reader.damageFound.map(\.kind) == [.corruption])
            #expect(all.count == Int(last) + 1 - 1)
            #expect(all.first == 0 && all.last == last)
        }
    }

    @Test func aReadInTheMiddleReadsThatSegmentOnly() throws {
        try withStream(segments: 30) { store, files in
            // Every segment but the first, the last and the one read is unreadable garbage:
            // a reader that read them would report damage.
            let target = files.count / 2
            let wanted = try #require(
                UInt64(files[target].split(separator: "/").last!.prefix(20)))
            for (index, file) in files.enumerated()
            where index != 0 && index != target && index < files.count - 1 {
                JournalFixtures.write(Array(repeating: 0x5A, count: 300), to: file)
            }
            let reader = try store.openReader(for: JournalFixtures.stream)
            let batch = try reader.entries(from: wanted, limit: 5)
            #expect(batch.map(\.sequence) == Array(wanted..<wanted + 5))
            #expect(reader.damageFound.isEmpty)
        }
    }

    @Test func aStreamThatJustBeganASegmentEndsInTheOneBefore() throws {
        let root = JournalFixtures.temporaryDirectory()
        defer { JournalFixtures.remove(root) }
        let store = try JournalStore(
            directory: root + "/state/journal", policy: JournalPolicy(sync: .never, segmentBytes: 700))
        try JournalFixtures.journal(0..<25, in: store)
        // A new segment holding only its header, as a writer leaves it when it has just begun one.
        let directory = store.path(of: JournalFixtures.stream)
        JournalFixtures.write(
            JournalRecord.segmentMagic, to: directory + "/" + SegmentName.name(firstSequence: 25))
        let reader = try store.openReader(for: JournalFixtures.stream)
        #expect(reader.firstSequence == 0)
        #expect(reader.lastSequence == 24)
        #expect(try reader.entries(from: 20, limit: 10).map(\.sequence) == Array(20..<25))
    }

    @Test func aReaderFollowingAStreamAcrossSegmentsMissesNothing() throws {
        let root = JournalFixtures.temporaryDirectory()
        defer { JournalFixtures.remove(root) }
        let store = try JournalStore(
            directory: root + "/state/journal", policy: JournalPolicy(sync: .never, segmentBytes: 700))
        let writer = try store.openWriter(for: JournalFixtures.stream)
        try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
        let reader = try store.openReader(for: JournalFixtures.stream)
        var next: UInt64 = 0
        var read: [UInt64] = []
        for sequence: UInt64 in 1..<200 {
            try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            if sequence % 7 == 0 {
                let batch = try reader.entries(from: next, limit: 100)
                read += batch.map(\.sequence)
                next = (batch.last?.sequence ?? next - 1) + 1
            }
        }
        read += try reader.entries(from: next, limit: 1000).map(\.sequence)
        #expect(read == Array(0..<200))
        #expect(reader.damageFound.isEmpty)
    }
}
