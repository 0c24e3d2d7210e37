import Foundation
import Glibc
import KinesiaSystem
import KinesiaWire
import Testing

@testable import KinesiaJournal

/// A writer that gathers records (``JournalWriter/writesBehind``) and writes them in batches,
/// on real files: the same bytes on disk as one write per record, nothing visible before it is
/// written, segments rolled at the same places, a failure that stops it like any other.
struct JournalWriteBehindTests {
    private func withStore(
        _ policy: JournalPolicy = JournalPolicy(sync: .never), _ body: (JournalStore, String) throws -> Void
    ) throws {
        try JournalFixtures.withStore(policy, body)
    }

    private let other = JournalStream(topic: try! Topic.pose(camera: "cam1"), streamID: StreamID(7))

    @Test func gatheredRecordsAreWrittenInOneWriteWithTheSameBytes() throws {
        try withStore(JournalPolicy(sync: .never, segmentBytes: 1000)) { store, _ in
            let direct = try store.openWriter(for: JournalFixtures.stream)
            let behind = try store.openWriter(for: other)
            behind.writesBehind = true
            var writes = 0
            behind.writeFunction = { descriptor, bytes, offset in
                writes += 1
                return FileDescriptor.write(descriptor: descriptor, bytes, at: offset)
            }
            for sequence: UInt64 in 0..<50 {
                try direct.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
                try behind.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
                if sequence % 10 == 9 { try behind.writePending() }
            }
            #expect(!behind.hasPending)
            #expect(behind.lastSequence == 49)
            // Segments roll at the same records: the files are byte for byte the same.
            let directFiles = JournalFixtures.segments(store)
            let behindFiles = JournalFixtures.segments(store, other)
            #expect(directFiles.count == behindFiles.count)
            #expect(
                directFiles.map { $0.split(separator: "/").last! }
                    == behindFiles.map { $0.split(separator: "/").last! })
            for (a, b) in zip(directFiles, behindFiles) {
                #expect(JournalFixtures.bytes(a) == JournalFixtures.bytes(b))
            }
            // One write per batch and per segment started (its header), not one per record.
            #expect(writes < 50 / 2)
        }
    }

    @Test func nothingGatheredIsReadBeforeItIsWritten() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            writer.writesBehind = true
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            try writer.writePending()
            try writer.append(sequence: 1, frames: JournalFixtures.frames(1))
            try writer.append(sequence: 2, frames: JournalFixtures.frames(2))
            #expect(writer.hasPending)
            #expect(writer.lastSequence == 2)
            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.lastSequence == 0)
            try writer.writePending()
            try reader.refresh()
            #expect(try reader.entries(from: 0, limit: 10).map(\.sequence) == [0, 1, 2])
        }
    }

    @Test func gatheringStopsAtTheLimitAndAFlushWritesTheRest() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            writer.writesBehind = true
            let size = 1000
            let count = UInt64(JournalWriter.pendingLimit / size + 10)
            for sequence in 0..<count {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence, size: size))
            }
            let reader = try store.openReader(for: JournalFixtures.stream)
            // The limit's worth was written without being asked; the rest waits.
            #expect(reader.lastSequence.map { $0 >= UInt64(JournalWriter.pendingLimit / size) - 2 } == true)
            #expect(writer.hasPending)
            try writer.flush()
            try reader.refresh()
            #expect(reader.lastSequence == count - 1)
        }
    }

    @Test func aSegmentDeletedUnderGatheredRecordsStartsANewOneWithThem() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            writer.writesBehind = true
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            try writer.writePending()
            try writer.append(sequence: 1, frames: JournalFixtures.frames(1))
            unlink(JournalFixtures.segments(store)[0])
            try writer.flush()
            #expect(writer.damage.map(\.kind) == [.deletedSegment])
            try writer.append(sequence: 2, frames: JournalFixtures.frames(2))
            try writer.writePending()
            let reader = try store.openReader(for: JournalFixtures.stream)
            // Record 1 was still gathered when the check found the segment gone: it starts the
            // new segment.
            #expect(writer.damage.first?.missing == 0...0)
            #expect(try reader.allEntries().map(\.sequence) == [1, 2])
        }
    }

    /// A full disk when the gathered records are written: nothing half-written stays, the writer
    /// stops and refuses the next record, as it does without gathering.
    @Test func aFullDiskWhenWritingTheGatheredRecordsStopsTheWriter() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            writer.writesBehind = true
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            try writer.writePending()
            let file = JournalFixtures.segments(store)[0]
            let good = JournalFixtures.bytes(file)
            try writer.append(sequence: 1, frames: JournalFixtures.frames(1))
            try writer.append(sequence: 2, frames: JournalFixtures.frames(2))
            writer.writeFunction = { descriptor, bytes, offset in
                let half = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count / 2)])
                _ = FileDescriptor.write(descriptor: descriptor, half, at: offset)
                return (half.count, Errno(rawValue: ENOSPC))
            }
            #expect(throws: JournalError.diskFull(path: file)) { try writer.writePending() }
            #expect(JournalFixtures.bytes(file) == good)
            #expect(!writer.hasPending)
            #expect(throws: JournalError.stopped(JournalError.diskFull(path: file).description)) {
                try writer.append(sequence: 3, frames: JournalFixtures.frames(3))
            }
        }
    }

    @Test func anIntervalPolicySyncsWhatWasWrittenNotWhatWaits() throws {
        try withStore(JournalPolicy(sync: .interval(.milliseconds(100)))) { store, _ in
            var time = Duration.zero
            let writer = try store.openWriter(for: JournalFixtures.stream)
            writer.now = { time }
            writer.writesBehind = true
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            #expect(writer.counters.syncs == 0)
            try writer.writePending()
            #expect(writer.counters.syncs == 1)
            time = .milliseconds(500)
            try writer.append(sequence: 1, frames: JournalFixtures.frames(1))
            // Gathered, not written: nothing to sync.
            try writer.syncIfDue()
            #expect(writer.counters.syncs == 1)
            try writer.writePending()
            #expect(writer.counters.syncs == 2)
            time = .milliseconds(550)
            try writer.append(sequence: 2, frames: JournalFixtures.frames(2))
            try writer.writePending()
            #expect(writer.counters.syncs == 2)
            time = .milliseconds(700)
            try writer.syncIfDue()
            #expect(writer.counters.syncs == 3)
        }
    }
}
