import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWire
import Testing

/// ``ExactlyOnceSubscriber`` and a stream said to be moving, over real sockets on a manual
/// clock: a consumer saw #5 of a pool session live and never a heartbeat of its worker, whose
/// pool worker then says the stream is moving (its lease lapsed). The hole is held past the 5 s
/// a publisher without replay gets, and filled once the taker announces the stream.
struct ExactlyOnceSubscriberMovingTests {
    @Test(.timeLimit(.minutes(1)))
    func aHoleInAStreamAPoolWorkerSaysIsMovingIsFilledByTheTaker() async throws {
        let broker = try FakeBroker()
        let topic = try Topic.event(camera: "cam7", session: "left")
        let source = InMemoryReplaySource()
        var encoder = WireEncoder(streamID: Sent.stream)
        var payload: [UInt8] = []
        var published: [[[UInt8]]] = []
        for index in 0..<6 {
            try encoder.encode(
                json: Array("{\"type\":\"holdStarted\",\"t\":\(index)}".utf8), on: topic, into: &payload)
            published.append([topic.bytes, payload])
            source.append(
                topic: topic, stream: Sent.stream, sequence: UInt64(index), frames: published[index])
        }
        let context = try ZMQContext()
        defer { context.terminate() }
        let clock = ManualClock()
        let subscriber = try ExactlyOnceSubscriber(
            context: context, bus: broker.bus, topics: [.kind(.event)], from: .beginning, clock: clock)
        defer { subscriber.close() }
        #expect(try await broker.waitUntil { $0.subscriptions.contains("event/") })

        var heartbeat = WireEncoder(streamID: StreamID(42))
        func send(_ report: HealthReport) throws {
            try heartbeat.encode(
                json: try report.json(), on: try Topic.health(process: report.process), into: &payload)
            try broker.send([try Topic.health(process: report.process).bytes, payload])
        }
        let moving = HealthReport(
            process: "pool-a", role: "pool-worker", pid: 1, uptime: 1, counters: [:],
            moving: [MovingStream(topic: topic, stream: Sent.stream)])
        var lost: [Range<UInt64>] = []
        var delivered: [[UInt8]] = []
        func read(for wall: Duration, _ each: () throws -> Void = {}) throws {
            let end = ContinuousClock.now.advanced(by: wall)
            while ContinuousClock.now < end {
                try each()
                while let delivery = try subscriber.receive(timeout: .milliseconds(20)) {
                    switch delivery {
                    case .message(let message): delivered.append(try message.encode().1)
                    case .lost(_, let sequences): lost.append(sequences)
                    case .health, .malformed: break
                    }
                }
            }
        }

        // #5 live, then the word that its stream moves; 20 s pass on the subscriber's clock.
        try await offCooperativePool {
            try broker.send(published[5])
            try read(for: .milliseconds(300))
            try send(moving)
            try read(for: .milliseconds(300))
        }
        for _ in 0..<10 {
            clock.advance(by: .seconds(2))
            try await offCooperativePool { try read(for: .milliseconds(50)) }
        }
        #expect(lost.isEmpty, "held past the 5 s of a publisher without replay")
        #expect(delivered.isEmpty)

        // The taker announces the stream: the hole is asked of it and filled, nothing lost.
        let server = try ReplayServer(endpoint: "ipc://\(broker.directory)/taker.sock")
        defer { server.close() }
        let taker = HealthReport(
            process: "pool-b-cam7.left", role: "worker", pid: 2, uptime: 1, counters: [:],
            replay: ReplayAnnouncement(endpoint: server.endpoint, streams: source.streams()))
        try await offCooperativePool {
            try read(for: .seconds(2)) {
                try send(taker)
                try server.serve(from: source)
            }
        }
        #expect(lost.isEmpty)
        #expect(delivered == published.map { $0[1] })
    }

    /// The same hole without the word: lost after the announcement's 5 s (what the word
    /// changes, checked on the same sockets).
    @Test(.timeLimit(.minutes(1)))
    func withoutTheWordTheHoleIsLostAfterFiveSeconds() async throws {
        let broker = try FakeBroker()
        let topic = try Topic.event(camera: "cam7", session: "left")
        var encoder = WireEncoder(streamID: Sent.stream)
        var payload: [UInt8] = []
        for index in 0..<6 {
            try encoder.encode(
                json: Array("{\"type\":\"holdStarted\",\"t\":\(index)}".utf8), on: topic, into: &payload)
        }
        let context = try ZMQContext()
        defer { context.terminate() }
        let clock = ManualClock()
        let subscriber = try ExactlyOnceSubscriber(
            context: context, bus: broker.bus, topics: [.kind(.event)], from: .beginning, clock: clock)
        defer { subscriber.close() }
        #expect(try await broker.waitUntil { $0.subscriptions.contains("event/") })
        var lost: [Range<UInt64>] = []
        func read() throws {
            let end = ContinuousClock.now.advanced(by: .milliseconds(200))
            while ContinuousClock.now < end {
                while let delivery = try subscriber.receive(timeout: .milliseconds(20)) {
                    if case .lost(_, let sequences) = delivery { lost.append(sequences) }
                }
            }
        }
        try await offCooperativePool {
            try broker.send([topic.bytes, payload])
            try read()
        }
        for _ in 0..<4 {
            clock.advance(by: .seconds(2))
            try await offCooperativePool { try read() }
        }
        #expect(lost == [0..<5])
    }
}
