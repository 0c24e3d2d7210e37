import KinesiaSystem
import Synchronization
import Testing

@testable import KinesiaJournal

/// The turns the processes sharing a journal store take at the retention scans due by time,
/// on a wall clock the test moves: another process's scan stands for this one's until the
/// policy's interval (10 s) has passed since it ended, not a nanosecond less.
struct RetentionTurnTests {
    @Test func aScanStandsForEveryOtherUntilTheIntervalHasPassedSinceItEnded() {
        let rule = RetentionTurn(interval: .seconds(10))
        #expect(rule.isTaken(lastScanEnded: nil, now: .seconds(100)), "no scan recorded")
        #expect(rule.isTaken(lastScanEnded: .seconds(100), now: .seconds(100)) == false)
        #expect(rule.isTaken(lastScanEnded: .seconds(100), now: .seconds(110) - .nanoseconds(1)) == false)
        #expect(rule.isTaken(lastScanEnded: .seconds(100), now: .seconds(110)))
        #expect(rule.isTaken(lastScanEnded: .seconds(100), now: .seconds(99)), "a wall clock set back")
    }

    /// Two stores on one directory (two processes of a deployment), on one wall clock that the
    /// test moves and each on a manual clock of its own for its schedule: a stream aged past the
    /// policy's 5 s is deleted by the second only once 10 s have passed since the first's scan.
    @Test func anotherProcesssScanStandsForThisOnesUntilTenSecondsPassedOnTheWallClock() throws {
        let root = JournalFixtures.temporaryDirectory()
        defer { JournalFixtures.remove(root) }
        let start = JournalStore.wallClock()
        let wall = Mutex(start)
        let wallClock: @Sendable () -> Duration = { wall.withLock { $0 } }
        let policy = JournalPolicy(sync: .never, maximumAge: .seconds(5))
        #expect(policy.retentionInterval == .seconds(10))
        let firstClock = ManualClock()
        let first = try JournalStore(
            directory: root + "/journal", policy: policy, clock: firstClock, wallClock: wallClock)
        #expect(first.enforceRetentionIfDue(), "the store's first scan")
        do {
            try first.openWriter(for: JournalFixtures.stream).append(sequence: 0, frames: [[1]])
        }

        let secondClock = ManualClock()
        let second = try JournalStore(
            directory: root + "/journal", policy: policy, clock: secondClock, wallClock: wallClock)
        wall.withLock { $0 = start + .seconds(10) - .nanoseconds(1) }
        #expect(second.enforceRetentionIfDue() == false, "the first's scan ended 9.999999999 s ago")
        #expect(try second.streams() == [JournalFixtures.stream], "the aged stream is kept")

        secondClock.advance(by: policy.retentionInterval)
        wall.withLock { $0 = start + .seconds(10) }
        #expect(second.enforceRetentionIfDue(), "10 s since the first's scan: the second scans")
        #expect(try second.streams().isEmpty, "the stream aged 10 s (over 5 s) is deleted")
    }
}
