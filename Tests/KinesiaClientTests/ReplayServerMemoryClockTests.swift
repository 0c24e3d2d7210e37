import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import Testing

/// When the replay server gives the heap freed by departed connections back to the system
/// (`malloc_trim`, counted as `replayMemoryReturns` on `health/`), timed on the server's clock:
/// a manual clock here, so the quiet period and the follow-up pass only when the test says.
struct ReplayServerMemoryClockTests {
    /// Waits (real time: the gate's thread and the sockets) until `condition` holds, at most 10 s.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            usleep(2000)
        }
        return true
    }

    @Test func theFreedHeapIsGivenBackAfterAQuietSecondOnTheServersClockThenOnceMoreFiveSecondsLater()
        throws
    {
        let directory = BusAddressTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let server = try ReplayServer(
            endpoint: "ipc://\(directory)/replay.sock",
            connections: ReplayConnections(
                trimAfterDepartures: 2, trimQuietPeriod: .seconds(1), trimInterval: .seconds(2),
                trimFollowUp: .seconds(5)),
            clock: clock)
        defer { server.close() }
        let context = try ZMQContext()
        defer { context.terminate() }
        var clients: [ZMQSocket] = []
        for _ in 0..<2 {
            let client = try ZMQSocket(.dealer, context: context, linger: .zero)
            try client.connect(server.endpoint)
            clients.append(client)
        }
        #expect(Self.eventually { server.counters["replayConnections"] == 2 }, "\(server.counters)")
        for client in clients { client.close() }
        #expect(Self.eventually { server.counters["replayConnections"] == 0 }, "\(server.counters)")
        #expect(server.counters["replayMemoryReturns"] == nil, "two left, no time passed: kept")

        clock.advance(by: .milliseconds(999))
        usleep(300_000)  // three turns of the gate's loop
        #expect(server.counters["replayMemoryReturns"] == nil, "999 ms quiet on the server's clock: kept")
        clock.advance(by: .milliseconds(1))
        #expect(
            Self.eventually { server.counters["replayMemoryReturns"] == 1 },
            "a quiet second: given back once \(server.counters)")

        clock.advance(by: .seconds(5) - .milliseconds(1))
        usleep(300_000)
        #expect(server.counters["replayMemoryReturns"] == 1, "the follow-up is not due yet")
        clock.advance(by: .milliseconds(1))
        #expect(
            Self.eventually { server.counters["replayMemoryReturns"] == 2 },
            "5 s later: given back once more \(server.counters)")
    }
}
