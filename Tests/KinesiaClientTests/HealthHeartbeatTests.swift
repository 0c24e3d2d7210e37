import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import KinesiaWire
import Testing

/// The heartbeat's timing on a manual clock: a report at once, then one per interval, and the
/// uptime it carries (no waiting, no wall clock).
struct HealthHeartbeatTests {
    @Test func aReportGoesOutAtOnceThenOncePerIntervalWithTheUptimeOfTheClock() throws {
        let directory = NSTemporaryDirectory() + "kinesia-heartbeat-\(UUID().uuidString.prefix(8))"
        let bus = try BusAddress(parsing: directory)
        try bus.prepare()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        defer { context.terminate() }
        let publisher = try BusPublisher(context: context, bus: bus)
        defer { publisher.close() }
        let clock = ManualClock()
        var health = try HealthPublisher(
            process: "worker-beat", role: "worker", interval: .seconds(1), clock: clock)
        var asked = 0
        func due() -> Bool {
            health.publishIfDue(
                counters: {
                    asked += 1
                    return ["poses": asked]
                }, via: publisher)
        }

        #expect(health.isDue, "nothing sent yet")
        #expect(due(), "the first report goes out at once")
        #expect(!health.isDue)
        #expect(!due())
        clock.advance(by: .milliseconds(999))
        #expect(!health.isDue, "a millisecond early")
        #expect(!due(), "a millisecond early")
        #expect(asked == 1, "the counters are read only for a report that goes out")
        clock.advance(by: .milliseconds(1))
        #expect(health.isDue)
        #expect(due())
        #expect(!health.isDue)
        #expect(health.uptime == 1.0)
        #expect(health.report(counters: [:]).uptime == 1.0)
        clock.advance(by: .seconds(10))
        #expect(due(), "one report after a long pause, not ten")
        #expect(!due())
        #expect(health.published + health.failures == 3, "every report due, and only those")
    }
}
