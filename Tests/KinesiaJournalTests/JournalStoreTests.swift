import Foundation
import Glibc
import KinesiaSystem
import KinesiaWire
import Testing

@testable import KinesiaJournal

/// Writers and readers on real files in a temporary directory.
struct JournalStoreTests {
    private func withStore(
        _ policy: JournalPolicy = JournalPolicy(sync: .never), _ body: (JournalStore, String) throws -> Void
    ) throws {
        try JournalFixtures.withStore(policy, body)
    }

    @Test func appendedRecordsReadBackInOrderByteForByte() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            for sequence: UInt64 in 0..<100 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.firstSequence == 0)
            #expect(reader.lastSequence == 99)
            let batch = try reader.entries(from: 10, limit: 5)
            #expect(batch == (10..<15).map { JournalEntry(sequence: $0, frames: JournalFixtures.frames($0)) })
            #expect(try reader.allEntries().count == 100)
            #expect(try reader.entries(from: 100, limit: 5).isEmpty)
        }
    }

    @Test func theStoreListsItsStreams() throws {
        try withStore { store, _ in
            let event = JournalStream(
                topic: try Topic.event(camera: "cam.1", session: "left"), streamID: StreamID(7))
            let pose = JournalFixtures.stream
            try store.openWriter(for: event).append(sequence: 0, frames: [[1]])
            try store.openWriter(for: pose).append(sequence: 0, frames: [[1]])
            #expect(try store.streams() == [event, pose])
            #expect(store.path(of: event).hasSuffix("/event+cam.1+left/0000000000000007"))
        }
    }

    @Test func directoriesAreOwnerOnlyAndFilesToo() throws {
        try withStore { store, root in
            try store.openWriter(for: JournalFixtures.stream).append(sequence: 0, frames: [[1]])
            #expect(JournalFixtures.mode(root + "/state") == 0o700)
            #expect(JournalFixtures.mode(store.directory) == 0o700)
            #expect(JournalFixtures.mode(store.path(of: JournalFixtures.stream)) == 0o700)
            for file in JournalFixtures.segments(store) { #expect(JournalFixtures.mode(file) == 0o600) }
        }
    }

    @Test func refusesAStoreOthersCanWrite() throws {
        let root = JournalFixtures.temporaryDirectory()
        defer { JournalFixtures.remove(root) }
        chmod(root, 0o777)
        #expect {
            try JournalStore(directory: root)
        } throws: { error in
            guard case .unsafePath(let message) = error as? JournalError else { return false }
            return message.contains("0777")
        }
    }

    @Test func aSecondWriterOfTheSameStreamIsRefused() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            #expect(throws: JournalError.inUse(path: store.path(of: JournalFixtures.stream))) {
                try store.openWriter(for: JournalFixtures.stream)
            }
            _ = writer
        }
    }

    /// A pool worker whose session moved gives its stream up at once, even while the writer
    /// object lives on: the next writer (another worker of the box) opens it and goes on.
    @Test func aClosedWriterLetsTheStreamGoAndRefusesRecords() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 0, frames: [[1]])
            writer.close()
            #expect(throws: JournalError.self) { try writer.append(sequence: 1, frames: [[1]]) }
            let next = try store.openWriter(for: JournalFixtures.stream)
            #expect(next.lastSequence == 0)
            try next.append(sequence: 1, frames: [[2]])
            _ = writer
        }
    }

    /// A process that runs session after session (a pool worker over a clinic's day) keeps no
    /// descriptor of a stream it closed, though the writer object lives on.
    @Test func aClosedWriterKeepsNoFileOfItsStreamOpen() throws {
        try withStore { store, _ in
            let path = store.path(of: JournalFixtures.stream)
            func openFiles() -> [String] {
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                return entries.compactMap { entry in
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry))
                        .flatMap { $0.hasPrefix(path) ? $0 : nil }
                }
            }
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 0, frames: [[1]])
            try writer.flush()
            // The directory, its lock and the segment.
            #expect(openFiles().count == 3, "\(openFiles())")
            writer.close()
            #expect(openFiles().isEmpty, "\(openFiles())")
            _ = writer
        }
    }

    @Test func sequenceNumbersMustIncrease() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 5, frames: [[1]])
            #expect(throws: JournalError.sequenceNotIncreasing(5, last: 5)) {
                try writer.append(sequence: 5, frames: [[1]])
            }
        }
    }

    @Test func aReopenedWriterContinuesAfterTheLastRecord() throws {
        try withStore { store, _ in
            try JournalFixtures.journal(0..<10, in: store)
            let writer = try store.openWriter(for: JournalFixtures.stream)
            #expect(writer.lastSequence == 9)
            #expect(writer.recovery.cutBytes == 0)
            try writer.append(sequence: 10, frames: JournalFixtures.frames(10))
            #expect(
                try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                    == Array(0...10))
        }
    }

    @Test func segmentsRollAtTheirSizeAndReadAcrossTheBoundary() throws {
        try withStore(JournalPolicy(sync: .never, segmentBytes: 1000)) { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            for sequence: UInt64 in 0..<50 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            let files = JournalFixtures.segments(store)
            #expect(files.count >= 4)
            for file in files { #expect(JournalFixtures.bytes(file).count <= 1000) }
            #expect(files.first!.hasSuffix("/00000000000000000000.journal"))
            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(
                try reader.allEntries()
                    == (0..<50).map { JournalEntry(sequence: $0, frames: JournalFixtures.frames($0)) })
            #expect(try reader.entries(from: 20, limit: 30).map(\.sequence) == Array(20..<50))
        }
    }

    @Test func retentionDeletesTheOldestSegmentsBeyondTheSizeLimit() throws {
        try withStore(
            JournalPolicy(sync: .never, segmentBytes: 1000, maximumBytes: 3000, retentionInterval: .zero)
        ) {
            store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            for sequence: UInt64 in 0..<200 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            let files = JournalFixtures.segments(store)
            let total = files.reduce(0) { $0 + JournalFixtures.bytes($1).count }
            #expect(total <= 3000 + 1000)
            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.lastSequence == 199)
            #expect((reader.firstSequence ?? 0) > 100)
            #expect(try reader.entries(from: 0, limit: 1).first?.sequence == reader.firstSequence)
        }
    }

    /// With the default 10 s interval, a writer filling segments faster than that still keeps
    /// the store within the limit: closing a segment's worth makes the scan due. Before, only
    /// the first segment scanned, and the 200 records kept every segment.
    @Test func aFastWriterStaysWithinTheSizeLimitBetweenTwoIntervals() throws {
        try withStore(JournalPolicy(sync: .never, segmentBytes: 1000, maximumBytes: 3000)) { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            var peak = 0
            for sequence: UInt64 in 0..<200 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
                peak = max(
                    peak, JournalFixtures.segments(store).reduce(0) { $0 + JournalFixtures.bytes($1).count })
            }
            #expect(peak <= 3000 + store.policy.retentionBytes + 1000)
            #expect((try store.openReader(for: JournalFixtures.stream).firstSequence ?? 0) > 100)
        }
    }

    @Test func aRetentionScanIsDueByTimeOrByTheBytesClosedSinceTheLast() {
        var schedule = RetentionSchedule(interval: .seconds(10), bytes: 1000)
        let requests: [(Duration, closing: Int)] = [
            (.seconds(0), 0), (.seconds(1), 600), (.seconds(2), 0),
            (.seconds(3), 400), (.seconds(4), 999), (.seconds(13), 0), (.seconds(14), 0),
        ]
        let due = requests.map { schedule.isDue(at: $0.0, closing: $0.closing) }
        // The first request; 1000 bytes closed since the scan; 10 s since the last scan.
        #expect(due == [true, false, false, true, false, true, false])
    }

    /// Hundreds of streams started at once (a worker of 64 cameras) scan the store once, not at
    /// every first segment: before, the worker stalled for seconds in those scans.
    @Test func writersStartingManyStreamsScanForRetentionOnce() throws {
        try withStore(JournalPolicy(sync: .never)) { store, _ in
            var writers: [JournalWriter] = []
            for index in 0..<50 {
                let stream = JournalStream(
                    topic: try Topic.event(camera: "cam\(index)", session: "left"), streamID: StreamID(7))
                let writer = try store.openWriter(for: stream)
                try writer.append(sequence: 0, frames: [[1]])
                writers.append(writer)
            }
            #expect(store.enforceRetentionIfDue() == false, "the first writer's scan was moments ago")
        }
    }

    /// A store of many streams is synced as a whole, off the writing thread: its writers never
    /// fdatasync inline (before, a worker's 256 streams made 1,280 syncs a second on its loop).
    @Test func aGroupSyncMakesTheStoreDurableAndItsWritersNeverSyncInline() throws {
        try withStore(JournalPolicy(sync: .interval(.milliseconds(10)))) { store, _ in
            let group = JournalGroupSync(interval: .milliseconds(10))
            group.start()
            defer { group.stop() }
            let writer = try store.openWriter(for: JournalFixtures.stream)
            writer.groupSync = group
            writer.syncsInGroup = true
            for sequence: UInt64 in 0..<100 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
                try writer.syncIfDue()
            }
            #expect(writer.counters.syncs == 0)
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while group.syncs < 2, clock.now < deadline { usleep(10_000) }
            #expect(group.syncs >= 2)
            #expect(group.syncFailures == 0)
        }
    }

    /// The processes sharing a store (a deployment's ingests and workers) take turns at the
    /// scans due by time: one scan stands for every other until the interval has passed. Before,
    /// each of 66 processes of 64 cameras scanned all 66's streams every 10 s, at about the same
    /// moment: a tenth of the box's CPU, and bursts of hundreds of ms in the answers' latency.
    @Test func processesSharingAStoreTakeTurnsAtTheScansDueByTime() throws {
        try withStore(JournalPolicy(sync: .never, maximumAge: .nanoseconds(1))) { first, _ in
            let turnPath = first.directory + "/" + JournalStore.retentionTurnName
            #expect(first.enforceRetentionIfDue(), "the store's first scan")
            do {
                try first.openWriter(for: JournalFixtures.stream).append(sequence: 0, frames: [[1]])
            }
            let second = try JournalStore(directory: first.directory, policy: first.policy)
            #expect(second.enforceRetentionIfDue() == false, "the first process's scan stands for it")
            #expect(try second.streams() == [JournalFixtures.stream], "nothing was deleted")

            // Another process scanning now: its turn is not taken from it.
            try FileDescriptor.open(turnPath, .readWrite).write(Array(repeating: 0, count: 8), at: 0)
            let scanning = try FileDescriptor.open(turnPath, .readWrite)
            #expect(try scanning.tryLock())
            let third = try JournalStore(directory: first.directory, policy: first.policy)
            #expect(third.enforceRetentionIfDue() == false, "another process holds the turn")
            try scanning.close()

            // The last scan long ago (the epoch): the next due scan runs and deletes the stream.
            let fourth = try JournalStore(directory: first.directory, policy: first.policy)
            #expect(fourth.enforceRetentionIfDue())
            #expect(try fourth.streams().isEmpty, "the turn's file is not a stream")
            let stamped = try FileDescriptor.open(turnPath, .read).read(upTo: 16)
            #expect(stamped.count == 8)
        }
    }

    /// A writer that closed enough bytes scans whoever scanned last: the store may be over its
    /// size limit now.
    @Test func aScanDueByTheBytesClosedIsNotSkippedForAnotherProcesssTurn() {
        var schedule = RetentionSchedule(interval: .seconds(10), bytes: 1000)
        #expect(schedule.due(at: .seconds(0)) == .interval)
        #expect(schedule.due(at: .seconds(1), closing: 600) == nil)
        #expect(schedule.due(at: .seconds(2), closing: 600) == .closedBytes)
        #expect(schedule.due(at: .seconds(13)) == .interval)
    }

    @Test func retentionByAgeRemovesAStreamNobodyWrites() throws {
        try withStore(JournalPolicy(sync: .never, maximumAge: .seconds(60))) { store, _ in
            do {
                try store.openWriter(for: JournalFixtures.stream).append(sequence: 0, frames: [[1]])
            }
            let held = JournalStream(topic: JournalFixtures.stream.topic, streamID: StreamID(99))
            let writer = try store.openWriter(for: held)
            try writer.append(sequence: 0, frames: [[1]])
            let result = try store.enforceRetention(now: JournalStore.wallClock() + .seconds(3600))
            #expect(result.deletedSegments == 1)
            #expect(try store.streams() == [held], "the held stream keeps its segment")
        }
    }

    /// kill -9 or a power cut in the middle of a write: the next writer cuts the tail.
    @Test(arguments: [1, 7, 8, 20, 51])
    func aTornTailIsCutOnOpen(cut: Int) throws {
        try withStore { store, _ in
            try JournalFixtures.journal(0..<5, in: store)
            let file = JournalFixtures.segments(store)[0]
            let bytes = JournalFixtures.bytes(file)
            JournalFixtures.write(Array(bytes.dropLast(cut)), to: file)
            let writer = try store.openWriter(for: JournalFixtures.stream)
            #expect(writer.lastSequence == 3)
            #expect(
                writer.recovery.cutBytes == JournalRecord.encodedSize(of: JournalFixtures.frames(4)) - cut)
            try writer.append(sequence: 4, frames: JournalFixtures.frames(4))
            #expect(JournalFixtures.bytes(file) == bytes, "the record written again is the same bytes")
        }
    }

    @Test func aZeroFilledTailIsCutOnOpen() throws {
        try withStore { store, _ in
            try JournalFixtures.journal(0..<3, in: store)
            let file = JournalFixtures.segments(store)[0]
            let bytes = JournalFixtures.bytes(file)
            JournalFixtures.write(bytes + [UInt8](repeating: 0, count: 512), to: file)
            let writer = try store.openWriter(for: JournalFixtures.stream)
            #expect(writer.recovery.cutBytes == 512)
            #expect(writer.lastSequence == 2)
            #expect(JournalFixtures.bytes(file).count == bytes.count)
        }
    }

    /// A damaged record in the middle is never served: the reader skips it and counts it.
    @Test func aCorruptMiddleRecordIsSkippedAndCounted() throws {
        try withStore(JournalPolicy(sync: .never, segmentBytes: 600)) { store, _ in
            try JournalFixtures.journal(0..<30, in: store)
            // The second record of the first segment, and the last of the second (a torn record
            // in a segment that is not the last).
            let files = JournalFixtures.segments(store)
            var first = JournalFixtures.bytes(files[0])
            let recordSize = JournalRecord.encodedSize(of: JournalFixtures.frames(0))
            first[8 + recordSize + 30] ^= 0xFF
            JournalFixtures.write(first, to: files[0])
            let second = JournalFixtures.bytes(files[1])
            JournalFixtures.write(Array(second.dropLast(3)), to: files[1])

            let reader = try store.openReader(for: JournalFixtures.stream)
            let sequences = try reader.allEntries().map(\.sequence)
            let lastOfTheSecond = second.withUnsafeBytes { SegmentScan($0) }.records.last!.sequence
            #expect(!sequences.contains(1))
            #expect(!sequences.contains(lastOfTheSecond))
            #expect(sequences.count == 28)
            #expect(reader.damagedRanges == 2)
            for entry in try reader.allEntries() {
                #expect(entry.frames == JournalFixtures.frames(entry.sequence))
            }
        }
    }

    /// A flipped bit between good records of the last segment is corruption, not the trace of
    /// an interrupted write; a record cut short is.
    @Test func theWriterTellsCorruptionFromATornTail() throws {
        try withStore { store, _ in
            try JournalFixtures.journal(0..<5, in: store)
            let file = JournalFixtures.segments(store)[0]
            var bytes = JournalFixtures.bytes(file)
            let recordSize = JournalRecord.encodedSize(of: JournalFixtures.frames(0))
            bytes[8 + 2 * recordSize + 30] ^= 0x04
            JournalFixtures.write(bytes, to: file)
            do {
                let writer = try store.openWriter(for: JournalFixtures.stream)
                #expect(writer.recovery.damage.map(\.kind) == [.corruption])
                #expect(!writer.recovery.isOnlyATornTail)
                #expect(writer.recovery.description.contains("corrupt"))
            }
            JournalFixtures.write(Array(bytes.dropLast(9)), to: file)
            let writer = try store.openWriter(for: JournalFixtures.stream)
            #expect(writer.recovery.damage.map(\.kind) == [.corruption, .tornTail])
            #expect(writer.recovery.description.contains("torn tail"))
        }
    }

    /// A segment that is not the last, cut at a record boundary or inside a record: the
    /// records it lost are reported, with their sequence numbers.
    @Test(arguments: [0, 3])
    func aTruncatedSegmentThatIsNotTheLastReportsTheRecordsLost(extra: Int) throws {
        try withStore(JournalPolicy(sync: .never, segmentBytes: 600)) { store, _ in
            try JournalFixtures.journal(0..<30, in: store)
            let files = JournalFixtures.segments(store)
            let first = JournalFixtures.bytes(files[0])
            let records = first.withUnsafeBytes { SegmentScan($0) }.records
            // Keep the first three records (and `extra` bytes of the fourth).
            JournalFixtures.write(Array(first.prefix(records[3].offset + extra)), to: files[0])
            let lost = records[3].sequence...records.last!.sequence

            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.damageFound.count == 1)
            #expect(reader.damageFound.first?.kind == (extra == 0 ? .missingRecords : .truncatedSegment))
            #expect(reader.damageFound.first?.missing == lost)
            #expect(reader.damageFound.counters["journalDamage"] == 1)
            try reader.refresh()
            #expect(reader.damageFound.count == 1, "reported once")
        }
    }

    /// The segment being written, deleted under the writer: the writer says so and goes on in a
    /// new segment (so what follows is replayable); a reader that knew it says so too.
    @Test func aDeletedActiveSegmentIsReportedAndWritingGoesOn() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            for sequence: UInt64 in 0..<5 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.lastSequence == 4)
            unlink(JournalFixtures.segments(store)[0])
            try writer.flush()
            #expect(writer.damage.map(\.kind) == [.deletedSegment])
            #expect(writer.damage.first?.missing == 0...4)
            try writer.append(sequence: 5, frames: JournalFixtures.frames(5))
            #expect(JournalFixtures.segments(store).count == 1)
            try reader.refresh()
            #expect(reader.damageFound.map(\.kind) == [.deletedSegment])
            #expect(reader.damageFound.first?.missing == 0...4)
            #expect(try reader.entries(from: 0, limit: 10).map(\.sequence) == [5])
        }
    }

    /// Retention removes the oldest segments: not damage.
    @Test func retentionOfTheOldestSegmentsIsNoDamage() throws {
        try withStore(JournalPolicy(sync: .never, segmentBytes: 600)) { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            for sequence: UInt64 in 0..<30 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            let reader = try store.openReader(for: JournalFixtures.stream)
            unlink(JournalFixtures.segments(store)[0])
            try reader.refresh()
            #expect(reader.damageFound.isEmpty)
        }
    }

    @Test func aReaderFollowsAWriterAndIgnoresARecordUnderWay() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.lastSequence == 0)
            try writer.append(sequence: 1, frames: JournalFixtures.frames(1))
            // Half of the next record, as another process would see a write under way.
            let file = JournalFixtures.segments(store)[0]
            let before = JournalFixtures.bytes(file)
            var record: [UInt8] = []
            try JournalRecord.encode(sequence: 2, frames: JournalFixtures.frames(2), into: &record)
            JournalFixtures.write(before + record.prefix(10), to: file)
            #expect(try reader.entries(from: 1, limit: 10).map(\.sequence) == [1])
            #expect(reader.damagedRanges == 0)
            JournalFixtures.write(before + record, to: file)
            #expect(try reader.entries(from: 2, limit: 10).map(\.sequence) == [2])
        }
    }

    /// A reader that last looked when the stream held one record is asked for a batch that its
    /// view cannot fill: it looks again, so a replay batch is as long as what is journaled
    /// (not what the reader knew), whatever the time of its last look.
    @Test func aBatchLongerThanWhatTheReaderKnowsIsReadFromWhatIsWrittenNow() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            let reader = try store.openReader(for: JournalFixtures.stream)
            #expect(reader.lastSequence == 0)
            for sequence in 1...8 as ClosedRange<UInt64> {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            #expect(try reader.entries(from: 0, limit: 2).map(\.sequence) == [0, 1])
            #expect(try reader.entries(from: 0, limit: 256).map(\.sequence) == Array(0...8))
            #expect(reader.lastSequence == 8)
        }
    }

    /// A full disk (ENOSPC after a partial write): the writer cuts what it wrote, stops, and
    /// refuses every later record without touching the file.
    @Test(arguments: [ENOSPC, EDQUOT])
    func aFullDiskStopsJournalingAndLeavesNoTornRecord(code: Int32) throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            let file = JournalFixtures.segments(store)[0]
            let good = JournalFixtures.bytes(file)
            writer.writeFunction = { descriptor, bytes, offset in
                // Half goes in, then the disk is full.
                let half = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count / 2)])
                _ = FileDescriptor.write(descriptor: descriptor, half, at: offset)
                return (half.count, Errno(rawValue: code))
            }
            #expect(throws: JournalError.diskFull(path: file)) {
                try writer.append(sequence: 1, frames: JournalFixtures.frames(1))
            }
            #expect(writer.stopReason == .diskFull(path: file))
            #expect(JournalFixtures.bytes(file) == good)
            writer.writeFunction = nil
            #expect(throws: JournalError.stopped(JournalError.diskFull(path: file).description)) {
                try writer.append(sequence: 2, frames: JournalFixtures.frames(2))
            }
            #expect(writer.counters.refused == 1)
            #expect(try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence) == [0])
        }
    }

    @Test func aFullDiskWhenStartingASegmentStopsToo() throws {
        try withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            writer.writeFunction = { _, _, _ in (0, Errno(rawValue: ENOSPC)) }
            #expect {
                try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            } throws: { error in
                if case .diskFull = error as? JournalError { return true }
                return false
            }
            #expect(writer.stopReason != nil)
        }
    }

    @Test func anAlwaysPolicySyncsEveryRecord() throws {
        try withStore(JournalPolicy(sync: .always)) { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            for sequence: UInt64 in 0..<5 { try writer.append(sequence: sequence, frames: [[1]]) }
            #expect(writer.counters.syncs == 5)
        }
    }

    /// The writer's syncs are timed on its store's clock (a manual one here).
    @Test func anIntervalPolicySyncsWhenIdleAfterTheInterval() throws {
        try withStore { _, root in
            let clock = ManualClock()
            let store = try JournalStore(
                directory: root + "/manual", policy: JournalPolicy(sync: .interval(.milliseconds(200))),
                clock: clock)
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 0, frames: [[1]])
            #expect(writer.counters.syncs == 1)
            clock.advance(by: .milliseconds(10))
            try writer.append(sequence: 1, frames: [[1]])
            try writer.syncIfDue()
            #expect(writer.counters.syncs == 1)
            clock.advance(by: .milliseconds(200))
            try writer.syncIfDue()
            #expect(writer.counters.syncs == 2)
        }
    }

    /// A writer keeps its store (its policy, its retention) as long as it lives.
    @Test func aWriterOutlivesTheStoreValueThatOpenedIt() throws {
        let root = JournalFixtures.temporaryDirectory()
        defer { JournalFixtures.remove(root) }
        var writer: JournalWriter?
        do {
            let store = try JournalStore(directory: root + "/journal", policy: JournalPolicy(sync: .always))
            writer = try store.openWriter(for: JournalFixtures.stream)
        }
        try writer?.append(sequence: 0, frames: JournalFixtures.frames(0))
        #expect(writer?.counters.syncs == 1)
        writer = nil
        let reader = try JournalReader(
            directory: root + "/journal/pose+cam0/" + JournalFixtures.stream.streamDirectoryName)
        #expect(reader.lastSequence == 0)
    }

    @Test func aReaderOfAMissingStreamSaysSo() throws {
        try withStore { store, _ in
            #expect(throws: JournalError.notAJournal(store.path(of: JournalFixtures.stream))) {
                try store.openReader(for: JournalFixtures.stream)
            }
        }
    }
}
