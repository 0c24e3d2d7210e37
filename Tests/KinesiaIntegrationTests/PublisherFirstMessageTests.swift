import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// A pool session's publisher (made to await the broker's forwarded subscriptions) sends its
/// first message only once the subscriptions the real broker forwards on connection have
/// reached it: a session's first message (its run's start, which live consumers such as the
/// voice never get again) is not dropped, as a PUB drops what it sends before them (2 of 20
/// here without the wait).
@Suite(.serialized, .tags(.process))
struct PublisherFirstMessageTests {
    @Test func theFirstMessageOfANewPublisherReachesASubscriberEveryTime() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let bus = try BusAddress(parsing: topology.bus)
        let context = try ZMQContext()
        defer { context.terminate() }
        let subscriber = try BusSubscriber(context: context, bus: bus, prefixes: [.kind(.session)])
        defer { subscriber.close() }
        try await Task.sleep(for: .milliseconds(500))  // the subscription reaches the broker
        let topic = try Topic.session(camera: "cam0", session: "left")
        var dropped: [Int] = []
        var durations: [Duration] = []
        for round in 0..<20 {
            let began = ContinuousClock.now
            let publisher = try BusPublisher(
                context: context, bus: bus, linger: .seconds(1), connectionTimeout: .seconds(2),
                awaitsForwardedSubscriptions: true)
            durations.append(ContinuousClock.now - began)
            try publisher.publish(json: Array("{\"type\":\"runStarted\"}".utf8), kind: .session, on: topic)
            var got = false
            let deadline = ContinuousClock.now.advanced(by: .seconds(2))
            while !got, ContinuousClock.now < deadline {
                if case .message? = try subscriber.receive(timeout: .milliseconds(50)) { got = true }
            }
            if !got { dropped.append(round) }
            publisher.close()
        }
        #expect(dropped.isEmpty, "first messages dropped in rounds \(dropped); connecting took \(durations)")
        #expect(durations.allSatisfy { $0 < .seconds(1) }, "\(durations)")
    }
}
