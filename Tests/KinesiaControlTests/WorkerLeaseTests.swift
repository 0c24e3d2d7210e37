import KinesiaControl
import Testing

/// A pool worker's lease: held from a report's sending time for the lease the coordinator
/// grants it, never by a grant it cannot place, and given up at a lapse.
struct WorkerLeaseTests {
    @Test func aGrantHoldsFromTheReportsSendingTimeNotFromItsArrival() {
        var lease = WorkerLease()
        #expect(!lease.holds(at: .zero))
        let number = lease.reportSent(at: .seconds(10))
        #expect(lease.unansweredFor(at: .milliseconds(10_700)) == .milliseconds(700))
        // The grant arrives 900 ms later: the lease still counts from 10 s.
        let extendedLate = lease.granted(LeaseGrant(report: number, lease: .seconds(3)))
        #expect(extendedLate)
        #expect(lease.heldUntil == .seconds(13))
        #expect(lease.holds(at: .milliseconds(12_999)))
        #expect(!lease.holds(at: .seconds(13)))
        #expect(lease.unansweredFor(at: .seconds(11)) == nil)
    }

    @Test func grantsOfReportsItNeverSentOrAnsweredAlreadyOrOlderExtendNothing() {
        var lease = WorkerLease()
        let first = lease.reportSent(at: .seconds(1))
        let second = lease.reportSent(at: .seconds(2))
        let unknownExtends = lease.granted(LeaseGrant(report: 99, lease: .seconds(3)))
        #expect(!unknownExtends)
        let secondExtends = lease.granted(LeaseGrant(report: second, lease: .seconds(3)))
        #expect(secondExtends)
        #expect(lease.heldUntil == .seconds(5))
        // The first report's answer is never coming after the second's; if it did, it is no one's.
        let firstExtends = lease.granted(LeaseGrant(report: first, lease: .seconds(3)))
        #expect(!firstExtends)
        let secondAgainExtends = lease.granted(LeaseGrant(report: second, lease: .seconds(30)))
        #expect(!secondAgainExtends)
        #expect(lease.heldUntil == .seconds(5))
    }

    @Test func afterALapseOnlyAReportSentSinceHoldsAgain() {
        var lease = WorkerLease()
        let before = lease.reportSent(at: .seconds(1))
        _ = lease.reportSent(at: .seconds(2))
        lease.granted(LeaseGrant(report: before, lease: .seconds(3)))
        // Paused from 2 s to 10 s: lapsed.
        #expect(!lease.holds(at: .seconds(10)))
        lease.lapse()
        #expect(lease.heldUntil == nil)
        // The answer to the report sent before the pause, read after it, holds nothing.
        let beforePauseExtends = lease.granted(LeaseGrant(report: before + 1, lease: .seconds(3)))
        #expect(!beforePauseExtends)
        let after = lease.reportSent(at: .seconds(10))
        let afterPauseExtends = lease.granted(LeaseGrant(report: after, lease: .seconds(3)))
        #expect(afterPauseExtends)
        #expect(lease.holds(at: .seconds(12)))
    }

    @Test func aCoordinatorAwayForLongIsRememberedForAMinuteOfReports() {
        var lease = WorkerLease()
        let first = lease.reportSent(at: .zero)
        for second in 1...200 { _ = lease.reportSent(at: .seconds(second)) }
        let forgottenExtends = lease.granted(LeaseGrant(report: first, lease: .seconds(3)))
        #expect(!forgottenExtends)
        #expect(lease.unansweredFor(at: .seconds(200)) == .seconds(63))
    }
}
