import Foundation
import Glibc
import KinesiaSystem
import KinesiaWire
import Synchronization
import Testing

@testable import KinesiaJournal

/// Records handed to the journal's own thread (``JournalWriteQueue``), on real files: written in
/// order with the bytes a direct writer writes, a job never ahead of the records before it, a
/// reader that waits only for what it wants, a failure reported and not repeated, a full queue
/// that makes the publisher wait, and nothing lost at a stop.
struct JournalWriteQueueTests {
    private let other = JournalStream(topic: try! Topic.pose(camera: "cam1"), streamID: StreamID(7))

    @Test func handedOverRecordsAreWrittenInOrderWithTheBytesOfADirectWriter() throws {
        try JournalFixtures.withStore(JournalPolicy(sync: .never, segmentBytes: 1000)) { store, _ in
            let direct = try store.openWriter(for: JournalFixtures.stream)
            let queued = try store.openWriter(for: other)
            let queue = JournalWriteQueue(interval: .milliseconds(5))
            queue.withWriters { queue.register(queued) }
            for sequence: UInt64 in 0..<200 {
                try direct.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
                queue.append(queued, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            queue.drain()
            #expect(queue.written(queued) == 199)
            #expect(try store.openReader(for: other).allEntries().map(\.sequence) == Array(0..<200))
            queue.stop()
            let directFiles = JournalFixtures.segments(store)
            let queuedFiles = JournalFixtures.segments(store, other)
            #expect(directFiles.count == queuedFiles.count && directFiles.count > 1)
            for (a, b) in zip(directFiles, queuedFiles) {
                #expect(JournalFixtures.bytes(a) == JournalFixtures.bytes(b))
            }
        }
    }

    /// What a publisher hands over by slot (``JournalWriteQueue/append(slot:sequence:frames:)``):
    /// two writers' records interleaved each land in their own journal, in order; a record still
    /// queued for a writer taken back is dropped, never written by the writer registered after it.
    @Test func recordsHandedOverBySlotGoToTheirOwnWriterAndNeverToALaterOne() throws {
        try withTwoQueuedWriters(interval: .seconds(60)) { store, first, second, queue, a, b throws in
            #expect(a != b)
            for sequence: UInt64 in 0..<50 {
                queue.append(slot: a, sequence: sequence, frames: JournalFixtures.frames(sequence))
                queue.append(slot: b, sequence: 100 + sequence, frames: JournalFixtures.frames(sequence))
            }
            queue.drain()
            #expect(
                try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                    == Array(0..<50))
            #expect(try store.openReader(for: other).allEntries().map(\.sequence) == Array(100..<150))
            #expect(queue.handedOver(second) == 149)

            queue.append(slot: b, sequence: 150, frames: JournalFixtures.frames(150))
            queue.withWriters { queue.unregister(second) }
            second.close()
            // Taken back: handed over by the writer itself, nothing is queued either.
            queue.append(second, sequence: 152, frames: JournalFixtures.frames(152))
            let reopened = try store.openWriter(for: other)
            let c = queue.withWriters { queue.register(reopened) }
            #expect(c != b, "a slot is never given to another writer")
            queue.append(slot: c, sequence: 151, frames: JournalFixtures.frames(151))
            queue.stop()
            #expect(try store.openReader(for: other).allEntries().map(\.sequence) == Array(100..<150) + [151])
            #expect(queue.takeFailures().isEmpty)
        }
    }

    /// A pool worker makes a queue for each run's service: a stopped queue, and the writers it
    /// held, are freed with the service (its thread held the queue, and the queue its thread).
    @Test func aStoppedQueueAndItsWritersAreFreed() throws {
        try JournalFixtures.withStore { store, _ in
            weak var freedQueue: JournalWriteQueue?
            weak var freedWriter: JournalWriter?
            do {
                let queue = JournalWriteQueue(interval: .milliseconds(5))
                let writer = try store.openWriter(for: JournalFixtures.stream)
                queue.withWriters { queue.register(writer) }
                queue.append(writer, sequence: 0, frames: JournalFixtures.frames(0))
                queue.drain()
                queue.stop()
                freedQueue = queue
                freedWriter = writer
            }
            // (Its thread may still be returning from its loop: a moment.)
            for _ in 0..<100 where freedQueue != nil { usleep(10_000) }
            #expect(freedQueue == nil, "the queue outlived its last reference")
            #expect(freedWriter == nil, "the writer outlived its queue")
        }
    }

    @Test func whatAWriterHeldWhenRegisteredCountsAsHandedOverAndWritten() throws {
        try JournalFixtures.withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            for sequence: UInt64 in 0..<5 {
                try writer.append(sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            let queue = JournalWriteQueue(interval: .seconds(60))
            queue.withWriters { queue.register(writer) }
            // A resumed stream: a reader of its records never waits for the thread.
            #expect(queue.handedOver(writer) == 4)
            #expect(queue.written(writer) == 4)
            queue.append(writer, sequence: 5, frames: JournalFixtures.frames(5))
            #expect(queue.handedOver(writer) == 5)
            #expect(queue.written(writer) == 4)
            queue.stop()
            #expect(queue.written(writer) == 5)
        }
    }

    @Test func aJobRunsAfterTheRecordsHandedOverBeforeItAndBeforeThoseAfter() throws {
        try JournalFixtures.withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            let queue = JournalWriteQueue(interval: .milliseconds(50))
            queue.withWriters { queue.register(writer) }
            let seen = Mutex<[UInt64]>([])
            for sequence: UInt64 in 0..<30 {
                queue.append(writer, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            // Handed over apart from the job: a turn of the publisher's loop between them.
            queue.handOver()
            // What a checkpoint counts on: the records before it are in the file when it runs.
            queue.run(label: "checkpoint") {
                let found = try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                seen.withLock { $0 = found }
            }
            for sequence: UInt64 in 30..<40 {
                queue.append(writer, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            queue.drain()
            #expect(seen.withLock { $0 } == Array(0..<30))
            #expect(queue.completed("checkpoint") == 1)
            queue.stop()
        }
    }

    /// A job that names its writers (a checkpoint counts on its own camera's streams) waits for
    /// their records only: the other writers' records gathered before it are written once, at the
    /// end of the batch, not split around it; the named writer's records after it still come
    /// after it.
    @Test func aJobThatNamesItsWritersWaitsForTheirRecordsOnly() throws {
        try withTwoQueuedWriters(interval: .milliseconds(50)) { store, _, _, queue, a, b throws in
            let seen = Mutex<(named: [UInt64], unnamed: [UInt64])>(([], []))
            for sequence: UInt64 in 0..<30 {
                queue.append(slot: a, sequence: sequence, frames: JournalFixtures.frames(sequence))
                queue.append(slot: b, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            queue.run(label: "checkpoint", after: [a]) {
                let found = try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                let others = (try? store.openReader(for: other).allEntries().map(\.sequence)) ?? []
                seen.withLock { $0 = (found, others) }
            }
            for sequence: UInt64 in 30..<40 {
                queue.append(slot: a, sequence: sequence, frames: JournalFixtures.frames(sequence))
                queue.append(slot: b, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            queue.drain()
            #expect(seen.withLock { $0.named } == Array(0..<30))
            #expect(seen.withLock { $0.unnamed } == [], "the other writer's records wait for the batch's end")
            #expect(try store.openReader(for: other).allEntries().map(\.sequence) == Array(0..<40))
            #expect(
                try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                    == Array(0..<40))
            #expect(queue.completed("checkpoint") == 1)
            queue.stop()
            #expect(queue.takeFailures().isEmpty)
        }
    }

    /// Records are gathered on the publishing thread and go to the queue's thread in one lock a
    /// turn (``JournalWriteQueue/handOver()``): nothing gathered is written before its hand-over;
    /// hand-overs that follow one another keep the records' order.
    @Test func gatheredRecordsGoOverAtTheHandOverInOrder() throws {
        try withQueuedWriter { store, writer, queue throws in
            queue.append(writer, sequence: 0, frames: JournalFixtures.frames(0))
            #expect(queue.handedOver(writer) == 0, "what the publisher gathered counts as journaled")
            Thread.sleep(forTimeInterval: 0.1)  // twenty intervals
            #expect(queue.written(writer) == nil, "gathered, not handed over: not written")
            queue.handOver()
            for sequence: UInt64 in 1..<20 {
                queue.append(writer, sequence: sequence, frames: JournalFixtures.frames(sequence))
                if sequence == 9 { queue.handOver() }
            }
            queue.drain()
            #expect(
                try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                    == Array(0..<20))
            queue.stop()
            #expect(queue.takeFailures().isEmpty)
        }
    }

    /// A publisher whose loop does not turn (a burst of records) still hands over once
    /// ``JournalWriteQueue/handOverBytes`` gathered.
    @Test func aLargeGatheringGoesOverWithoutWaitingForTheTurn() throws {
        try withQueuedWriter { store, writer, queue throws in
            let frames = [[UInt8](repeating: 7, count: 4096)]
            let count = UInt64(JournalWriteQueue.handOverBytes / 4096 + 2)
            for sequence in 0..<count { queue.append(writer, sequence: sequence, frames: frames) }
            let deadline = Date().addingTimeInterval(10)
            while queue.written(writer) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
            #expect(queue.written(writer) != nil, "a full gathering went over by itself")
            queue.stop()
            #expect(try store.openReader(for: JournalFixtures.stream).allEntries().count == Int(count))
        }
    }

    /// A store (no syncs) with the fixture stream's writer and `other`'s registered on a queue of
    /// `interval`, and their slots.
    private func withTwoQueuedWriters(
        interval: Duration,
        _ body: (JournalStore, JournalWriter, JournalWriter, JournalWriteQueue, Int, Int) throws -> Void
    ) throws {
        try JournalFixtures.withStore(JournalPolicy(sync: .never)) { store, _ in
            let first = try store.openWriter(for: JournalFixtures.stream)
            let second = try store.openWriter(for: other)
            let queue = JournalWriteQueue(interval: interval)
            let (a, b) = queue.withWriters { (queue.register(first), queue.register(second)) }
            try body(store, first, second, queue, a, b)
        }
    }

    /// A store (no syncs) whose fixture stream's writer is registered on a queue of 5 ms.
    private func withQueuedWriter(
        _ body: (JournalStore, JournalWriter, JournalWriteQueue) throws -> Void
    ) throws {
        try JournalFixtures.withStore(JournalPolicy(sync: .never)) { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            let queue = JournalWriteQueue(interval: .milliseconds(5))
            queue.withWriters { queue.register(writer) }
            try body(store, writer, queue)
        }
    }

    @Test func aFailingWriterIsReportedOnceAndTheOthersGoOn() throws {
        try JournalFixtures.withStore { store, _ in
            let failing = try store.openWriter(for: JournalFixtures.stream)
            let healthy = try store.openWriter(for: other)
            let queue = JournalWriteQueue(interval: .milliseconds(5))
            queue.withWriters {
                queue.register(failing)
                queue.register(healthy)
                failing.writeFunction = { _, _, _ in (0, Errno(rawValue: ENOSPC)) }
            }
            for sequence: UInt64 in 0..<20 {
                queue.append(failing, sequence: sequence, frames: JournalFixtures.frames(sequence))
                queue.append(healthy, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            queue.run(label: "job") { throw JournalError.notAJournal("on purpose") }
            queue.drain()
            let failures = queue.takeFailures()
            let writers = failures.compactMap { failure -> JournalError? in
                if case .writer(let writer, let error) = failure, writer === failing { error } else { nil }
            }
            #expect(writers.count == 1)
            if case .diskFull = writers.first {} else { Issue.record("expected a full disk, got \(writers)") }
            #expect(
                failures.contains {
                    if case .job(let label, _) = $0 { label == "job" } else { false }
                })
            #expect(queue.takeFailures().isEmpty)
            #expect(try store.openReader(for: other).allEntries().map(\.sequence) == Array(0..<20))
            queue.stop()
        }
    }

    @Test func aFullQueueMakesThePublisherWaitAndLosesNothing() throws {
        try JournalFixtures.withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            // Room for about two records: the publisher waits for the thread's next batch.
            let queue = JournalWriteQueue(interval: .milliseconds(2), limitBytes: 100)
            queue.withWriters { queue.register(writer) }
            for sequence: UInt64 in 0..<50 {
                queue.append(writer, sequence: sequence, frames: JournalFixtures.frames(sequence))
                // A turn of the publisher's loop: what it gathered goes over.
                queue.handOver()
            }
            #expect(queue.waits > 0)
            queue.stop()
            #expect(
                try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                    == Array(0..<50))
        }
    }

    @Test func aStopWritesWhatWasHandedOverWithoutWaitingForTheInterval() throws {
        try JournalFixtures.withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            let queue = JournalWriteQueue(interval: .seconds(60))
            queue.withWriters { queue.register(writer) }
            for sequence: UInt64 in 0..<10 {
                queue.append(writer, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            #expect(queue.written(writer) == nil)
            let started = ContinuousClock.now
            queue.stop()
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(
                try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence)
                    == Array(0..<10))
        }
    }

    /// A holder fenced past its lease lets its streams go without writing what it gathered: the
    /// new holder regenerates it; the lock is free at once.
    @Test func anAbandonedQueueWritesNothingMoreAndItsWriterLetsTheStreamGo() throws {
        try JournalFixtures.withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            try writer.append(sequence: 0, frames: JournalFixtures.frames(0))
            let queue = JournalWriteQueue(interval: .seconds(60))
            queue.withWriters { queue.register(writer) }
            for sequence: UInt64 in 1..<10 {
                queue.append(writer, sequence: sequence, frames: JournalFixtures.frames(sequence))
            }
            queue.abandon()
            writer.abandon()
            #expect(try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence) == [0])
            let next = try store.openWriter(for: JournalFixtures.stream)
            #expect(next.lastSequence == 0)
        }
    }
}
