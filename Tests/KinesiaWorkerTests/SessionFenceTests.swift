import KinesiaSystem
import Testing

@testable import KinesiaWorker

/// The fence a pool worker's sessions read before they publish: closed until a lease is held,
/// and closed again by the clock alone once the lease's time is over (a worker resumed from a
/// pause finds it closed before its control loop runs).
struct SessionFenceTests {
    @Test func itHoldsUntilTheLeasesDeadlineOnTheWorkersClockAndNoLonger() {
        let clock = ManualClock()
        let fence = SessionFence(clock: ElapsedClock(clock))
        #expect(!fence.holds)
        fence.hold(until: .seconds(3))
        #expect(fence.holds)
        clock.advance(by: .milliseconds(2_999))
        #expect(fence.holds)
        // Paused past it: nothing had to close it.
        clock.advance(by: .seconds(10))
        #expect(!fence.holds)
        fence.hold(until: .seconds(16))
        #expect(fence.holds)
        fence.hold(until: nil)
        #expect(!fence.holds)
    }
}
