import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Synchronization
import Testing

/// Replay endpoints are bounded and reclaimed (issue 19, item 5: the 65th endpoint failed
/// silently, and endpoints were never released).
struct ExactlyOnceSubscriberEndpointTests {
    /// Three publishers, room for two endpoints: the least recently used is closed for the
    /// third, and every stream is delivered whole from the beginning.
    @Test(.timeLimit(.minutes(3)))
    func moreEndpointsThanTheLimitAreAllServedByClosingTheLeastRecentlyUsed() async throws {
        let broker = try FakeBroker()
        let context = try ZMQContext()
        defer { context.terminate() }
        var servers: [(ReplayServer, InMemoryReplaySource, Topic)] = []
        for index in 0..<3 {
            let topic = try Topic.event(camera: "cam\(index)", session: "left")
            let source = InMemoryReplaySource()
            var encoder = WireEncoder(streamID: Sent.stream)
            var payload: [UInt8] = []
            for sequence in 0..<20 {
                try encoder.encode(
                    json: Array("{\"type\":\"holdStarted\",\"t\":\(sequence)}".utf8), on: topic,
                    into: &payload)
                source.append(
                    topic: topic, stream: Sent.stream, sequence: UInt64(sequence),
                    frames: [topic.bytes, payload])
            }
            let server = try ReplayServer(
                endpoint: "ipc://\(broker.directory)/replay\(index).sock")
            servers.append((server, source, topic))
        }
        defer { for (server, _, _) in servers { server.close() } }
        let subscriber = try ExactlyOnceSubscriber(
            context: context, bus: broker.bus, topics: [.kind(.event)], from: .beginning, maximumEndpoints: 2)
        defer { subscriber.close() }
        #expect(try await broker.waitUntil { $0.subscriptions.contains("event/") })

        var delivered: [Topic: Int] = [:]
        var lost = 0
        var healthEncoder = WireEncoder(streamID: StreamID(42))
        var healthPayload: [UInt8] = []
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(30))
        var nextHeartbeat = clock.now
        try await offCooperativePool {
            while delivered.values.reduce(0, +) < 60, clock.now < deadline {
                if clock.now >= nextHeartbeat {
                    for (index, (server, source, _)) in servers.enumerated() {
                        let report = HealthReport(
                            process: "worker\(index)", role: "worker", pid: 1, uptime: 1, counters: [:],
                            replay: ReplayAnnouncement(endpoint: server.endpoint, streams: source.streams()))
                        let topic = try Topic.health(process: "worker\(index)")
                        try healthEncoder.encode(json: try report.json(), on: topic, into: &healthPayload)
                        try broker.send([topic.bytes, healthPayload])
                    }
                    nextHeartbeat = clock.now.advanced(by: .milliseconds(200))
                }
                for (server, source, _) in servers { try server.serve(from: source) }
                while let delivery = try subscriber.receive(timeout: .milliseconds(5)) {
                    switch delivery {
                    case .message(let message): delivered[message.topic, default: 0] += 1
                    case .lost: lost += 1
                    case .health, .malformed: break
                    }
                    #expect(subscriber.connectedEndpoints.count <= 2)
                }
            }
        }
        #expect(lost == 0)
        for (_, _, topic) in servers { #expect(delivered[topic] == 20, "\(topic)") }
        #expect(subscriber.counters["replayEndpointsEvicted", default: 0] >= 1)
    }

    /// An endpoint that cannot be used is said (counted, told) and its hole reported lost,
    /// not asked for again for ever.
    @Test(.timeLimit(.minutes(3)))
    func anUnusableEndpointIsCountedToldAndItsHoleReportedLost() async throws {
        let broker = try FakeBroker()
        let context = try ZMQContext()
        defer { context.terminate() }
        let told = Mutex<[String]>([])
        let subscriber = try ExactlyOnceSubscriber(
            context: context, bus: broker.bus, topics: [.kind(.event)], from: .beginning,
            problems: { text in told.withLock { $0.append(text) } })
        defer { subscriber.close() }
        #expect(try await broker.waitUntil { $0.subscriptions.contains("event/") })
        let topic = try Topic.event(camera: "cam0", session: "left")
        let report = HealthReport(
            process: "worker", role: "worker", pid: 1, uptime: 1, counters: [:],
            replay: ReplayAnnouncement(
                endpoint: "inproc://nowhere",
                streams: [ReplayStreamInfo(topic: topic, stream: Sent.stream, first: 0, last: 9)]))
        var encoder = WireEncoder(streamID: StreamID(42))
        var payload: [UInt8] = []
        let healthTopic = try Topic.health(process: "worker")
        try encoder.encode(json: try report.json(), on: healthTopic, into: &payload)
        var lost: [Range<UInt64>] = []
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(10))
        try await offCooperativePool {
            while lost.isEmpty, clock.now < deadline {
                try broker.send([healthTopic.bytes, payload])
                while let delivery = try subscriber.receive(timeout: .milliseconds(50)) {
                    if case .lost(_, let sequences) = delivery { lost.append(sequences) }
                }
            }
        }
        #expect(lost == [0..<10])
        #expect(subscriber.counters["replayEndpointFailures", default: 0] >= 1)
        #expect(told.withLock { $0.count } == 1)
    }
}
