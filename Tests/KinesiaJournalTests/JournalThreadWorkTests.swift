import Foundation
import KinesiaSystem
import Synchronization
import Testing

@testable import KinesiaJournal

/// The journal's own threads do the work the publishing thread must not wait for (a retention
/// scan reads every stream's directory of the store: tens of ms at 64 cameras): after each
/// round of the group sync and after each batch of the write-behind queue, empty ones too, on
/// that thread.
struct JournalThreadWorkTests {
    /// The names of the threads the work ran on, one per run.
    private final class Runs: Sendable {
        private let names = Mutex<[String]>([])
        func record() { names.withLock { $0.append(Thread.current.name ?? "") } }
        var all: [String] { names.withLock { $0 } }

        /// Waits (at most 10 s) until the work ran `count` times.
        func wait(for count: Int) -> [String] {
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while all.count < count, clock.now < deadline { ThreadSleep.sleep(.milliseconds(5)) }
            return all
        }
    }

    @Test func theGroupSyncDoesItsWorkOnItsThreadAfterEachRound() {
        let runs = Runs()
        let group = JournalGroupSync(interval: .milliseconds(5)) { runs.record() }
        group.start()
        defer { group.stop() }
        let names = runs.wait(for: 3)
        #expect(names.count >= 3)
        #expect(names.allSatisfy { $0.hasSuffix("journal-sync") }, "\(names)")
    }

    @Test func theWriteQueueDoesItsWorkOnItsThreadAfterEachBatchEvenAnEmptyOne() {
        let runs = Runs()
        let queue = JournalWriteQueue(interval: .milliseconds(5)) { runs.record() }
        defer { queue.stop() }
        let names = runs.wait(for: 3)
        #expect(names.count >= 3)
        #expect(names.allSatisfy { $0.hasSuffix("journal-write") }, "\(names)")
    }
}
