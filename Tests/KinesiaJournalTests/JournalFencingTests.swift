import KinesiaSystem
import KinesiaWire
import Testing

@testable import KinesiaJournal

/// A stream whose lock the holder of an older assignment still holds (a pool worker paused past
/// its lease) is taken over by the holder of a newer one, with every record it had; a lock held
/// at the same or a newer epoch, or with none, is never broken.
struct JournalFencingTests {
    @Test func aNewerEpochTakesTheStreamFromAPausedHolderWithEveryRecordItWrote() throws {
        try JournalFixtures.withStore { store, _ in
            let paused = try store.openWriter(for: JournalFixtures.stream, epoch: 3)
            #expect(paused.fenced == nil)
            for sequence: UInt64 in 0..<10 {
                try paused.writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            let taker = try store.openWriter(for: JournalFixtures.stream, epoch: 5)
            #expect(taker.fenced == 3)
            #expect(taker.leftBehind == nil)
            #expect(taker.writer.lastSequence == 9)
            try taker.writer.append(sequence: 10, frames: JournalFixtures.frames(10))
            // The paused holder, back, writes into files no one reads.
            try? paused.writer.append(sequence: 10, frames: [[0xFF]])
            try? paused.writer.append(sequence: 11, frames: [[0xFF]])
            let entries = try store.openReader(for: JournalFixtures.stream).allEntries()
            #expect(
                entries == (0...10).map { JournalEntry(sequence: $0, frames: JournalFixtures.frames($0)) })
            #expect(JournalStore.holderEpoch(at: store.path(of: JournalFixtures.stream)) == 5)
            // Nothing is left beside the stream's directory.
            let topic = store.path(of: JournalFixtures.stream).split(separator: "/").dropLast().joined(
                separator: "/")
            #expect(try JournalStore.names(in: "/" + topic).count == 1)
        }
    }

    @Test func aLockHeldAtTheSameOrANewerEpochOrWithoutOneIsNeverBroken() throws {
        try JournalFixtures.withStore { store, _ in
            let holder = try store.openWriter(for: JournalFixtures.stream, epoch: 7)
            try holder.writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            for epoch: UInt64 in [6, 7] {
                #expect(throws: JournalError.self) {
                    try store.openWriter(for: JournalFixtures.stream, epoch: epoch)
                }
            }
            let other = JournalStream(topic: JournalFixtures.stream.topic, streamID: StreamID(99))
            let ingest = try store.openWriter(for: other)
            try ingest.append(sequence: 0, frames: [[1]])
            #expect(throws: JournalError.self) { try store.openWriter(for: other, epoch: 1_000) }
            try holder.writer.append(sequence: 1, frames: JournalFixtures.frames(1))
            #expect(try store.openReader(for: JournalFixtures.stream).lastSequence == 1)
        }
    }
}
