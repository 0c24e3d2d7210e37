import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// ``ExactlyOnceSubscriber`` over real sockets: a stand-in broker that loses two messages in
/// three, repeats some, never sends the tail, and announces a real ``ReplayServer``: every
/// message comes out once, in order, from the beginning.
struct ExactlyOnceSubscriberTests {
    /// The heartbeat of a stand-in worker that announces `server`'s streams, every 200 ms.
    struct Announcer {
        private var encoder = WireEncoder(streamID: StreamID(42))
        private var payload: [UInt8] = []
        private let report: HealthReport
        private let topic: Topic
        private var next = ContinuousClock.now

        init(server: ReplayServer, source: InMemoryReplaySource) throws {
            topic = try Topic.health(process: "worker")
            report = HealthReport(
                process: "worker", role: "worker", pid: 1, uptime: 1, counters: [:],
                replay: ReplayAnnouncement(endpoint: server.endpoint, streams: source.streams()))
        }

        /// Sends the heartbeat through `broker` when 200 ms passed since the last.
        mutating func announceIfDue(on broker: FakeBroker) throws {
            guard ContinuousClock.now >= next else { return }
            try encoder.encode(json: try report.json(), on: topic, into: &payload)
            try broker.send([topic.bytes, payload])
            next = ContinuousClock.now.advanced(by: .milliseconds(200))
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aLossyLiveStreamIsDeliveredWholeOnceAndInOrderThroughReplay() async throws {
        let broker = try FakeBroker()
        let topic = try Topic.event(camera: "cam0", session: "left")
        let count = 1000
        let source = InMemoryReplaySource()
        var published: [[[UInt8]]] = []
        var encoder = WireEncoder(streamID: Sent.stream)
        var payload: [UInt8] = []
        for index in 0..<count {
            try encoder.encode(
                json: Array("{\"type\":\"holdStarted\",\"t\":\(index)}".utf8), on: topic, into: &payload)
            published.append([topic.bytes, payload])
            source.append(
                topic: topic, stream: Sent.stream, sequence: UInt64(index), frames: [topic.bytes, payload])
        }
        let context = try ZMQContext()
        defer { context.terminate() }
        let server = try ReplayServer(endpoint: "ipc://\(broker.directory)/replay.sock")
        defer { server.close() }
        let subscriber = try ExactlyOnceSubscriber(
            context: context, bus: broker.bus, topics: [.kind(.event)], from: .beginning)
        defer { subscriber.close() }
        #expect(try await broker.waitUntil { $0.subscriptions.contains("event/") })

        // Live: only every third message, some twice (the subscriber's sequence tracker drops
        // the copies), none of the last hundred.
        for index in stride(from: 2, to: count - 100, by: 3) {
            try broker.send(published[index])
            if index % 7 == 0 { try broker.send(published[index]) }
        }
        var announcer = try Announcer(server: server, source: source)

        var delivered: [[UInt8]] = []
        var lost = 0
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(30))
        try await offCooperativePool {
            while delivered.count < count, clock.now < deadline {
                try announcer.announceIfDue(on: broker)
                try server.serve(from: source)
                while let delivery = try subscriber.receive(timeout: .milliseconds(5)) {
                    switch delivery {
                    case .message(let message):
                        let (_, bytes) = try message.encode()
                        delivered.append(bytes)
                    case .lost: lost += 1
                    case .health, .malformed: break
                    }
                }
            }
        }
        #expect(lost == 0)
        #expect(delivered.count == count)
        #expect(delivered == published.map { $0[1] })
        #expect(subscriber.machine.counters["replayed", default: 0] >= count * 2 / 3)
        #expect(
            subscriber.cursor.delivered[ReplayStreamKey(topic: topic, stream: Sent.stream)]
                == UInt64(count - 1))
    }

    /// A server at its connection cap refuses the subscriber's handshake, and libzmq never
    /// retries a refused handshake: the subscriber opens its DEALER again once it goes
    /// unanswered, and gets everything when the server has room (issue 19, item 8).
    @Test(.timeLimit(.minutes(3)))
    func aSubscriberRefusedAtAFullServerConnectsAgainAndGetsEverything() async throws {
        let broker = try FakeBroker()
        let topic = try Topic.event(camera: "cam0", session: "left")
        let count = 200
        let source = InMemoryReplaySource()
        var encoder = WireEncoder(streamID: Sent.stream)
        var payload: [UInt8] = []
        for index in 0..<count {
            try encoder.encode(
                json: Array("{\"type\":\"holdStarted\",\"t\":\(index)}".utf8), on: topic, into: &payload)
            source.append(
                topic: topic, stream: Sent.stream, sequence: UInt64(index), frames: [topic.bytes, payload])
        }
        let context = try ZMQContext()
        defer { context.terminate() }
        let server = try ReplayServer(
            endpoint: "ipc://\(broker.directory)/replay.sock",
            connections: ReplayConnections(maximumConnections: 1))
        defer { server.close() }
        // The one connection the server keeps, taken by an idle client for 2 s.
        let squatter = try ZMQSocket(.dealer, context: context, linger: .zero)
        try squatter.connect(server.endpoint)
        let clock = ContinuousClock()
        let connectedBy = clock.now.advanced(by: .seconds(20))
        while server.counters["replayConnections"] != 1, clock.now < connectedBy {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(server.counters["replayConnections"] == 1, "\(server.counters)")
        // The squatter leaves 3 s after the subscriber was first refused (or after 20 s): long
        // enough that a retry of the refused connection (libzmq retries once when the
        // connection closes before it reads the refusal) is refused too, short of the 5 s
        // after which the subscriber opens its DEALER again.
        var squatEnds = clock.now.advanced(by: .seconds(20))
        var refusedAt: ContinuousClock.Instant?
        let subscriber = try ExactlyOnceSubscriber(
            context: context, bus: broker.bus, topics: [.kind(.event)], from: .beginning)
        defer { subscriber.close() }
        #expect(try await broker.waitUntil { $0.subscriptions.contains("event/") })
        var announcer = try Announcer(server: server, source: source)

        var delivered = 0
        var lost = 0
        let deadline = clock.now.advanced(by: .seconds(45))
        try await offCooperativePool {
            while delivered < count, clock.now < deadline {
                if refusedAt == nil, server.counters["replayConnectionsRefused", default: 0] >= 1 {
                    refusedAt = clock.now
                    squatEnds = min(squatEnds, clock.now.advanced(by: .seconds(3)))
                }
                if !squatter.isClosed, clock.now >= squatEnds {
                    squatter.close()
                }
                try announcer.announceIfDue(on: broker)
                try server.serve(from: source)
                while let delivery = try subscriber.receive(timeout: .milliseconds(5)) {
                    switch delivery {
                    case .message: delivered += 1
                    case .lost: lost += 1
                    case .health, .malformed: break
                    }
                }
            }
        }
        #expect(delivered == count && lost == 0, "\(subscriber.counters) \(server.counters)")
        #expect(subscriber.counters["replayEndpointsReopened", default: 0] >= 1, "\(subscriber.counters)")
        #expect(server.counters["replayConnectionsRefused", default: 0] >= 1, "\(server.counters)")
    }
}
