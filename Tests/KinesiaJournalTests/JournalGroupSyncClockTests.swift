import Foundation
import Glibc
import KinesiaSystem
import Testing

@testable import KinesiaJournal

/// A group sync's rounds are timed on the clock given: on a manual clock, nothing is synced
/// until the clock has run an interval, however long the real time.
struct JournalGroupSyncClockTests {
    @Test func aRoundIsDueAnIntervalOfItsClockAfterTheStartAndNotBefore() throws {
        let path = NSTemporaryDirectory() + "kinesia-groupsync-\(UUID().uuidString.prefix(8))"
        let descriptor = open(path, O_CREAT | O_WRONLY, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        let clock = ManualClock()
        let group = JournalGroupSync(interval: .milliseconds(20), clock: clock)
        group.start()
        defer { group.stop() }
        group.schedule(descriptor)
        clock.advance(by: .milliseconds(19))
        Thread.sleep(forTimeInterval: 0.2)  // ten intervals of real time
        #expect(group.syncs == 0, "a millisecond early on the group's clock")
        clock.advance(by: .milliseconds(1))
        let deadline = Date().addingTimeInterval(10)
        while group.syncs == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(group.syncs == 1)
        #expect(group.syncFailures == 0)
    }
}
