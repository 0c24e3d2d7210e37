import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import KinesiaWire
import Testing

/// The wait for a subscriber is timed on the clock given: here a manual clock that the wait's
/// own cancellation check moves, so the 5 s of the timeout pass in five polls.
struct SubscriberWaitClockTests {
    @Test func theWaitForASubscriberEndsWhenItsClockReachesTheTimeoutAndNotBefore() throws {
        let directory = NSTemporaryDirectory() + "kinesia-subwait-\(UUID().uuidString.prefix(8))"
        let bus = try BusAddress(parsing: directory)
        try bus.prepare()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        defer { context.terminate() }
        // No broker: no subscription ever arrives.
        let publisher = try BusPublisher(context: context, bus: bus, waitsForSubscribers: true)
        defer { publisher.close() }
        let clock = ManualClock()
        let elapsed = ElapsedClock(clock)
        let steps: [Duration] = [.seconds(2), .seconds(2), .milliseconds(999), .milliseconds(1)]
        var checks = 0
        let found = try publisher.waitForSubscriber(
            to: try Topic.pose(camera: "cam0"), timeout: .seconds(5),
            isCancelled: {
                // Read between two polls: the clock moves on by the next step.
                if checks < steps.count { clock.advance(by: steps[checks]) }
                checks += 1
                return false
            }, clock: elapsed)
        #expect(!found)
        #expect(checks == 4, "checked at 0, 2, 4 and 4.999 s; over at 5 s")
        #expect(elapsed.now == .seconds(5))
    }
}
