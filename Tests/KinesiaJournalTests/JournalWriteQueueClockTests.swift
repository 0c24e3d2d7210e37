import Foundation
import KinesiaSystem
import Testing

@testable import KinesiaJournal

/// The write queue's batches are timed on the clock given: on a manual clock, what was handed
/// over is not written until the clock has run an interval, however long the real time; then an
/// interval from the end of that batch to the next.
struct JournalWriteQueueClockTests {
    @Test func aBatchIsDueAnIntervalOfTheQueuesClockAfterThePreviousOneAndNotBefore() throws {
        try JournalFixtures.withStore { store, _ in
            let writer = try store.openWriter(for: JournalFixtures.stream)
            let clock = ManualClock()
            let queue = JournalWriteQueue(interval: .milliseconds(20), clock: clock)
            defer { queue.stop() }
            queue.withWriters { queue.register(writer) }
            func untilWritten(_ sequence: UInt64) {
                let deadline = Date().addingTimeInterval(10)
                while queue.written(writer) != sequence, Date() < deadline {
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }

            queue.append(writer, sequence: 0, frames: JournalFixtures.frames(0))
            queue.handOver()
            clock.advance(by: .milliseconds(19))
            Thread.sleep(forTimeInterval: 0.2)  // ten intervals of real time
            #expect(queue.written(writer) == nil, "a millisecond early on the queue's clock")
            clock.advance(by: .milliseconds(1))
            untilWritten(0)
            #expect(queue.written(writer) == 0, "written once the clock reaches the interval")

            // The next batch is due an interval after the end of that one (the clock stood still).
            queue.append(writer, sequence: 1, frames: JournalFixtures.frames(1))
            queue.handOver()
            clock.advance(by: .milliseconds(19))
            Thread.sleep(forTimeInterval: 0.2)
            #expect(queue.written(writer) == 0, "a millisecond early for the second batch")
            clock.advance(by: .milliseconds(1))
            untilWritten(1)
            #expect(queue.written(writer) == 1)
            #expect(try store.openReader(for: JournalFixtures.stream).allEntries().map(\.sequence) == [0, 1])
        }
    }
}
