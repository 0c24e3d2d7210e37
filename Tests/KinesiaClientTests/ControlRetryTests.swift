import KinesiaClient
import Testing

/// When the control client sends its request again and when it gives up, with time passed in.
struct ControlRetryTests {
    @Test func theRequestGoesOutAtOnceThenEverySecondUntilTheTimeout() {
        var retry = ControlRetry(timeout: .milliseconds(2500))
        #expect(retry.next(now: .zero) == .send)
        #expect(retry.next(now: .zero) == .wait(.seconds(1)))
        #expect(retry.next(now: .milliseconds(400)) == .wait(.milliseconds(600)))
        #expect(retry.next(now: .seconds(1)) == .send, "the same id again: a restarted coordinator answers")
        #expect(retry.next(now: .milliseconds(1700)) == .wait(.milliseconds(300)))
        #expect(retry.next(now: .seconds(2)) == .send)
        // The last wait ends at the timeout, not at the next send.
        #expect(retry.next(now: .milliseconds(2100)) == .wait(.milliseconds(400)))
        #expect(retry.next(now: .milliseconds(2500)) == .giveUp)
        #expect(retry.next(now: .seconds(60)) == .giveUp)
    }

    @Test func aLateTurnSendsOnceAndNeverWaitsLessThanAMillisecond() {
        var retry = ControlRetry(timeout: .seconds(5), interval: .zero)
        #expect(retry.interval == .milliseconds(1))
        #expect(retry.next(now: .zero) == .send)
        #expect(retry.next(now: .microseconds(10)) == .wait(.milliseconds(1)))
        // A turn that came late (a loaded machine): one send, not one per second missed.
        var late = ControlRetry(timeout: .seconds(10))
        #expect(late.next(now: .zero) == .send)
        #expect(late.next(now: .milliseconds(3500)) == .send)
        #expect(late.next(now: .milliseconds(3500)) == .wait(.seconds(1)))
    }

    @Test func noTimeIsAnAnswerNotWaitedFor() {
        var retry = ControlRetry(timeout: .zero)
        #expect(retry.next(now: .zero) == .giveUp)
    }
}
