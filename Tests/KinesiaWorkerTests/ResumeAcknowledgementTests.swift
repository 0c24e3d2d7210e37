import Foundation
import Testing

@testable import KinesiaWorker

/// A pool session waits, boundedly, until the coordinator has its run's latest resume.
struct ResumeAcknowledgementTests {
    @Test func aVersionToldIsAwaitedUntilItOrALaterOneIsAcknowledged() {
        let kept = ResumeAcknowledgement()
        #expect(!kept.awaits)
        #expect(kept.wait(within: .zero))
        let first = kept.told()
        let second = kept.told()
        #expect(kept.awaits)
        kept.acknowledge(first)
        #expect(kept.awaits, "an older version does not release a wait for the latest")
        kept.acknowledge(second)
        #expect(!kept.awaits)
        #expect(kept.wait(within: .zero))
        kept.acknowledge(first)
        #expect(!kept.awaits, "an acknowledgement never goes back")
    }

    @Test func aWaitEndsAtItsBoundWhenNothingIsAcknowledged() {
        let kept = ResumeAcknowledgement()
        kept.told()
        let began = ContinuousClock.now
        #expect(!kept.wait(within: .milliseconds(50)))
        let waited = began.duration(to: .now)
        #expect(waited >= .milliseconds(45), "\(waited)")
    }

    @Test func aWaitEndsWhenAnotherThreadAcknowledges() {
        let kept = ResumeAcknowledgement()
        let version = kept.told()
        let thread = Thread {
            usleep(20_000)
            kept.acknowledge(version)
        }
        thread.start()
        #expect(kept.wait(within: .seconds(30)))
    }

    /// A coordinator that does not answer costs one bound, not one a hole: after a wait ran
    /// out, the next ones go on at once until the coordinator acknowledges anything; then the
    /// session waits again.
    @Test func afterAWaitRanOutTheNextGoOnAtOnceUntilTheCoordinatorAnswers() {
        let kept = ResumeAcknowledgement()
        kept.told()
        #expect(!kept.wait(within: .milliseconds(50)))
        let second = kept.told()
        let began = ContinuousClock.now
        #expect(!kept.wait(within: .seconds(30)))
        #expect(
            began.duration(to: .now) < .seconds(5), "it waited again for a coordinator that did not answer")
        kept.acknowledge(second)
        let third = kept.told()
        let thread = Thread {
            usleep(20_000)
            kept.acknowledge(third)
        }
        thread.start()
        #expect(kept.wait(within: .seconds(30)), "an answer makes the session wait again")
    }
}
