import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// Replay through the broker on a TCP bus with CURVE keys, between real processes: the worker
/// serves its journal through the broker's replay port (no port of its own), a consumer that
/// starts after the last event gets every event of `kinesia analyze` from it, and a key
/// without the right to read a topic is refused.
@Suite(.serialized, .tags(.process))
struct BrokerReplayIntegrationTests {
    static let source = ReplayIntegrationTests.source

    /// Broker, a worker with a left and a right session, an ingest of the whole source, all over
    /// CURVE; returns when the worker has analysed every pose and told the broker its streams.
    static func publishEverything(on topology: Topology, keys: TestKeys) async throws -> HealthWatch {
        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        _ = try await topology.startWorker(
            "worker",
            ["left", "right"].flatMap { ["--session", "\(source.camera)/\($0)=\(source.exercise):\($0)"] })
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", source.camera, "--source", source.spec, "--pace", "max"])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let poses = try PoseCount.of(source.spec)
        let report = await health.wait(for: "worker") { $0.counters["poses"] == poses }
        #expect(report != nil, "\(topology.diagnostics)")
        // The worker announces the broker's replay port, and the broker knows its two event
        // streams (and its snapshot streams).
        let port = try #require(try BusAddress(parsing: topology.bus).replayEndpoint)
        let announced = await health.wait(for: "worker") {
            ($0.replay?.streams.filter { $0.topic.kind == .event }.count ?? 0) == 2
        }
        #expect(announced?.replay?.endpoint == port)
        let broker = await health.wait(for: "broker") { $0.counters["replay.streams", default: 0] >= 2 }
        #expect(broker != nil, "\(topology.diagnostics)")
        return health
    }

    @Test func aListenerStartedAfterTheLastEventGetsEveryEventThroughTheBrokerOverCURVE() async throws {
        let expected = try await ReplayIntegrationTests.expected()
        let total = expected.values.map(\.count).reduce(0, +)
        #expect(total > 10)
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        let health = try await Self.publishEverything(on: topology, keys: keys)

        // Every event was published before this listener existed: all of it comes by replay,
        // through the broker.
        let listener = try await ReplayIntegrationTests.expectLateListener(on: topology, toGet: expected)
        #expect(!listener.errorText.contains("cannot be had"), "\(listener.diagnostics)")
        let broker = await health.wait(for: "broker") {
            $0.counters["replay.entries", default: 0] >= total
        }
        #expect(broker != nil, "\(topology.diagnostics)")
        #expect(broker?.counters["replay.refused.notAllowed"] == 0)
        let worker = await health.wait(for: "worker") { $0.counters["replayEntries", default: 0] >= total }
        #expect(worker != nil)
    }

    /// A DEALER of `key` connected to the broker's replay port, as a client's is.
    static func dealer(_ topology: Topology, keys: TestKeys, as key: BusKey, context: ZMQContext) throws
        -> ZMQSocket
    {
        var bus = try BusAddress(parsing: topology.bus)
        bus.credentials = keys.credentials(key)
        return try ReplayDealer.open("unused", context: context, bus: bus)
    }

    /// A DEALER of `key` on the broker's replay port; sends `request`, returns the replies
    /// received within `timeout` until an end or an error.
    static func ask(
        _ topology: Topology, keys: TestKeys, as key: BusKey, _ request: ReplayRequest,
        timeout: Duration = .seconds(60)
    ) async throws -> [ReplayReply] {
        let context = try ZMQContext()
        defer { context.terminate() }
        let dealer = try Self.dealer(topology, keys: keys, as: key, context: context)
        defer { dealer.close() }
        var replies: [ReplayReply] = []
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var frames: [[UInt8]] = []
        var sent = false
        while clock.now < deadline {
            if !sent { sent = try dealer.trySend([request.encoded()]) }
            while try dealer.tryReceive(into: &frames) {
                let reply = try ReplayReply.decode(frames)
                replies.append(reply)
                if case .entry = reply { continue }
                return replies
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return replies
    }

    @Test func aKeyWithoutTheRightToReadATopicIsRefusedAndCounted() async throws {
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        let health = try await Self.publishEverything(on: topology, keys: keys)
        let topic = try Topic.event(camera: Self.source.camera, session: "left")
        let request = ReplayRequest(requestID: 7, topic: topic, stream: nil, from: 0, limit: 3)

        // The consumer's key may read events: entries from the first, then an end that counts
        // them, through the broker. At most three; fewer when the worker's journal thread has
        // not written the rest yet (a reader at the live edge is answered with what is written,
        // and asks again: wire format, section 11).
        let allowed = try await Self.ask(topology, keys: keys, as: keys.consumer, request)
        let sequences = allowed.compactMap { reply -> UInt64? in
            if case .entry(let entry) = reply { entry.sequence } else { nil }
        }
        #expect((1...3).contains(sequences.count), "\(allowed)\n\(topology.diagnostics)")
        #expect(sequences == Array(0..<UInt64(sequences.count)), "\(allowed)")
        if case .end(let end)? = allowed.last {
            #expect(end.count == sequences.count)
        } else {
            Issue.record("\(allowed)")
        }

        // An ingest's key reads no events; a consumer's key reads no poses.
        let ingest = try await Self.ask(topology, keys: keys, as: keys.ingest, request)
        guard case .error(let refused)? = ingest.first else {
            Issue.record("\(ingest)")
            return
        }
        #expect(ingest.count == 1)
        #expect(refused.code == .notAllowed)
        #expect(refused.requestID == 7)
        #expect(refused.message.contains("may not replay \(topic)"), "\(refused.message)")
        let poses = ReplayRequest(
            requestID: 8, topic: try Topic.pose(camera: Self.source.camera), stream: nil, from: 0, limit: 1)
        let consumer = try await Self.ask(topology, keys: keys, as: keys.consumer, poses)
        guard case .error(let posesRefused)? = consumer.first else {
            Issue.record("\(consumer)")
            return
        }
        #expect(posesRefused.code == .notAllowed)

        // A key the broker does not know is not even admitted: no answer at all.
        let stranger = try await Self.ask(
            topology, keys: keys, as: keys.stranger, request, timeout: .seconds(2))
        #expect(stranger.isEmpty)

        let broker = await health.wait(for: "broker") {
            $0.counters["replay.refused.notAllowed", default: 0] >= 2
        }
        #expect(broker != nil, "\(topology.diagnostics)")
    }

    /// Sends `messages` on a DEALER of `key` to the broker's replay port; returns what came back
    /// within `timeout`.
    static func send(
        _ messages: [[[UInt8]]], _ topology: Topology, keys: TestKeys, as key: BusKey,
        timeout: Duration = .seconds(3)
    ) async throws -> [[[UInt8]]] {
        let context = try ZMQContext()
        defer { context.terminate() }
        let dealer = try Self.dealer(topology, keys: keys, as: key, context: context)
        defer { dealer.close() }
        for message in messages { try dealer.send(message) }
        var received: [[[UInt8]]] = []
        var frames: [[UInt8]] = []
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            while try dealer.tryReceive(into: &frames) { received.append(frames) }
            try await Task.sleep(for: .milliseconds(10))
        }
        return received
    }

    @Test func foreignFramesAndAServerClaimingAnotherRolesTopicsAreRefusedCountedAndTheBrokerGoesOn()
        async throws
    {
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        let health = try await Self.publishEverything(on: topology, keys: keys)
        let events = try Topic.event(camera: Self.source.camera, session: "left")
        // A worker key claiming a camera's poses: refused, with a notAllowed error.
        let claim = ReplayServeFrame(streams: [
            .init(topic: try Topic.pose(camera: "cam9"), stream: StreamID(rawValue: 5))
        ])
        let claimed = try await Self.send([[claim.encoded()]], topology, keys: keys, as: keys.worker)
        #expect(claimed.count == 1, "\(claimed)")
        if case .error(let failure)? = try? ReplayReply.decode(claimed.first ?? []) {
            #expect(failure.code == .notAllowed)
            #expect(failure.message.contains("pose/cam9/"), "\(failure.message)")
        } else {
            Issue.record("\(claimed)")
        }
        // Foreign frames, a message of three frames, an empty frame, a request cut short.
        let request = ReplayRequest(requestID: 9, topic: events, stream: nil, from: 0, limit: 2).encoded()
        let garbage: [[[UInt8]]] = [
            [Array("GET / HTTP/1.1".utf8)], [request, request, request], [[]], [Array(request.prefix(20))],
        ]
        let answers = try await Self.send(garbage, topology, keys: keys, as: keys.consumer)
        let codes = answers.compactMap { frames -> ReplayErrorCode? in
            if case .error(let failure)? = try? ReplayReply.decode(frames) { failure.code } else { nil }
        }
        #expect(codes == Array(repeating: .malformedRequest, count: 4), "\(answers)")
        // The broker goes on: the consumer's real request is answered.
        let allowed = try await Self.ask(
            topology, keys: keys, as: keys.consumer,
            ReplayRequest(requestID: 10, topic: events, stream: nil, from: 0, limit: 2))
        #expect(allowed.count == 3, "\(allowed)")
        let broker = await health.wait(for: "broker") {
            $0.counters["replay.refused.serve", default: 0] >= 1
                && $0.counters["replay.refused.malformed", default: 0] >= 4
        }
        #expect(broker != nil, "\(topology.diagnostics)")
        #expect(
            topology.diagnostics.contains("may not serve replay of pose/cam9/"), "\(topology.diagnostics)")
    }
}
