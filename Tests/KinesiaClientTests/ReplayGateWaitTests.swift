import Testing

@testable import KinesiaClient

/// How long a replay server's gate waits for an event: not at all on a timer while nothing is
/// due (an idle ingest's or worker's gate sleeps), until the heap's return when it is, and never
/// longer than ``ReplayGate/dueCheck`` then (a manual clock moves without waking it).
struct ReplayGateWaitTests {
    @Test func nothingDueWaitsForAnEvent() {
        #expect(ReplayGate.pollTimeout(due: nil, now: .seconds(5)) == nil)
    }

    @Test func aReturnDueSoonIsWaitedForUntilItIsDue() {
        #expect(ReplayGate.pollTimeout(due: .milliseconds(5030), now: .seconds(5)) == .milliseconds(30))
    }

    @Test func aReturnDueLaterIsLookedAtEveryDueCheck() {
        #expect(ReplayGate.pollTimeout(due: .seconds(60), now: .seconds(5)) == ReplayGate.dueCheck)
        #expect(ReplayGate.dueCheck == .milliseconds(100))
    }

    @Test func aReturnOverdueIsNotWaitedFor() {
        #expect(ReplayGate.pollTimeout(due: .seconds(4), now: .seconds(5)) == .zero)
    }
}
