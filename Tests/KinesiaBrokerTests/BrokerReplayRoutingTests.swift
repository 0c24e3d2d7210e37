import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaBroker

/// The broker's replay routing decisions, with no socket and the time passed in.
struct BrokerReplayRoutingTests {
    static let ingestA: [UInt8] = [0, 1]
    static let workerA: [UInt8] = [0, 2]
    static let workerB: [UInt8] = [0, 3]
    static let tablet: [UInt8] = [0, 9]
    static let events = try! Topic.event(camera: "cam0", session: "left")
    static let poses = try! Topic.pose(camera: "cam0")
    static let stream = StreamID(rawValue: 0xABCD)

    static func serve(_ streams: [(Topic, StreamID)]) -> [UInt8] {
        ReplayServeFrame(streams: streams.map { ReplayServeFrame.Stream(topic: $0.0, stream: $0.1) })
            .encoded()
    }

    static func request(_ id: UInt32, _ topic: Topic = events, stream: StreamID? = stream) -> [UInt8] {
        ReplayRequest(requestID: id, topic: topic, stream: stream, from: 0, limit: 256).encoded()
    }

    static func sent(_ outputs: [BrokerReplayRouting.Output]) -> [[[UInt8]]] {
        outputs.compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    static func failure(_ message: [[UInt8]]) -> ReplayFailure? {
        guard case .error(let failure)? = try? ReplayReply.decode(Array(message.dropFirst())) else {
            return nil
        }
        return failure
    }

    static func entry(_ id: UInt32, topic: Topic = events) -> [[UInt8]] {
        ReplayReply.entry(
            ReplayEntryReply(requestID: id, stream: stream, sequence: 0, frames: [topic.bytes, [1, 2, 3]])
        ).frames()
    }

    static func end(_ id: UInt32) -> [[UInt8]] {
        ReplayReply.end(ReplayBatchEnd(requestID: id, stream: stream, first: 0, last: 0, next: 1, count: 1))
            .frames()
    }

    @Test func aRequestGoesToTheServerOfItsStreamAndItsRepliesComeBack() {
        var routing = BrokerReplayRouting()
        #expect(
            Self.sent(
                routing.received(
                    [Self.workerA, Self.serve([(Self.events, Self.stream)])],
                    peer: .role(.worker), now: .zero)
            ).isEmpty)
        let forwarded = Self.sent(
            routing.received([Self.tablet, Self.request(7)], peer: .role(.consumer), now: .seconds(1)))
        #expect(forwarded == [[Self.workerA, Self.tablet, Self.request(7)]])
        let entry = Self.sent(
            routing.received(
                [Self.workerA, Self.tablet] + Self.entry(7), peer: .role(.worker),
                now: .seconds(1)))
        #expect(entry == [[Self.tablet] + Self.entry(7)])
        let end = Self.sent(
            routing.received(
                [Self.workerA, Self.tablet] + Self.end(7), peer: .role(.worker), now: .seconds(1)))
        #expect(end == [[Self.tablet] + Self.end(7)])
        // The batch is over: a second end for it is no reply of anything asked.
        #expect(
            Self.sent(
                routing.received(
                    [Self.workerA, Self.tablet] + Self.end(7), peer: .role(.worker),
                    now: .seconds(1))
            ).isEmpty)
        #expect(routing.counters["replay.requests"] == 1)
        #expect(routing.counters["replay.entries"] == 1)
        #expect(routing.counters["replay.refused.reply"] == 1)
    }

    @Test func ofTwoServersOfAStreamTheOneThatAnnouncedItLastIsAsked() {
        var routing = BrokerReplayRouting()
        _ = routing.received(
            [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker), now: .zero)
        _ = routing.received(
            [Self.workerB, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker), now: .seconds(2))
        // A keeps announcing it: B still announced it last (first listed later).
        _ = routing.received(
            [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker), now: .seconds(3))
        #expect(routing.server(for: Self.events, stream: Self.stream) == Self.workerB)
        #expect(routing.server(for: Self.events, stream: nil) == Self.workerB)
        // An earlier stream of the topic, named by its id: the topic's newest server.
        #expect(routing.server(for: Self.events, stream: StreamID(rawValue: 1)) == Self.workerB)
        // B goes quiet: after the lease, A is asked.
        _ = routing.received(
            [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker), now: .seconds(7))
        _ = routing.tick(now: .seconds(7))
        #expect(routing.server(for: Self.events, stream: Self.stream) == Self.workerA)
        #expect(routing.counters["replay.servers"] == 1)
    }

    @Test func aKeyWithoutTheReadRightIsRefusedNotAllowed() {
        var routing = BrokerReplayRouting()
        _ = routing.received(
            [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker), now: .zero)
        _ = routing.received(
            [Self.ingestA, Self.serve([(Self.poses, Self.stream)])], peer: .role(.ingest), now: .zero)
        for (peer, topic) in [
            (BusPeer.role(.ingest), Self.events), (.role(.consumer), Self.poses),
            (.role(.broker), Self.events),
        ] {
            let replies = Self.sent(
                routing.received([Self.tablet, Self.request(3, topic)], peer: peer, now: .zero))
            #expect(replies.count == 1)
            #expect(replies.first?.first == Self.tablet)
            #expect(replies.first.flatMap(Self.failure)?.code == .notAllowed)
            #expect(replies.first.flatMap(Self.failure)?.requestID == 3)
        }
        // A user id of no role.
        let unknown = Self.sent(routing.received([Self.tablet, Self.request(4)], peer: nil, now: .zero))
        #expect(unknown.first.flatMap(Self.failure)?.code == .notAllowed)
        #expect(routing.counters["replay.refused.notAllowed"] == 4)
        #expect(routing.counters["replay.requests"] == 0)
        // The rights that are given: a worker replays poses, a consumer events.
        #expect(
            Self.sent(
                routing.received(
                    [Self.workerB, Self.request(5, Self.poses)], peer: .role(.worker),
                    now: .zero)
            ).first?.first == Self.ingestA)
        #expect(
            Self.sent(routing.received([Self.tablet, Self.request(6)], peer: .role(.consumer), now: .zero))
                .first?.first == Self.workerA)
    }

    @Test func aServerClaimingStreamsOfTopicsItsKeyMayNotPublishIsRefused() {
        var routing = BrokerReplayRouting()
        let outputs = routing.received(
            [Self.ingestA, Self.serve([(Self.events, Self.stream), (Self.poses, Self.stream)])],
            peer: .role(.ingest), now: .zero)
        let replies = Self.sent(outputs)
        #expect(replies.count == 1)
        #expect(replies.first.flatMap(Self.failure)?.code == .notAllowed)
        #expect(
            outputs.contains {
                if case .log(let line) = $0 { line.contains("event/cam0/left/") } else { false }
            })
        #expect(routing.counters["replay.refused.serve"] == 1)
        #expect(routing.server(for: Self.events, stream: Self.stream) == nil)
        #expect(routing.server(for: Self.poses, stream: Self.stream) == Self.ingestA)
        // A consumer key serves nothing.
        _ = routing.received(
            [Self.tablet, Self.serve([(Self.events, Self.stream)])], peer: .role(.consumer), now: .zero)
        #expect(routing.server(for: Self.events, stream: Self.stream) == nil)
        #expect(routing.counters["replay.refused.serve"] == 2)
    }

    @Test func aRequestForAStreamNobodyServesWaitsForAServerThenIsUnknown() {
        var routing = BrokerReplayRouting(parkTime: .seconds(2))
        #expect(
            Self.sent(routing.received([Self.tablet, Self.request(1)], peer: .role(.consumer), now: .zero))
                .isEmpty)
        #expect(routing.counters["replay.parked"] == 1)
        // Its server comes: the request goes to it at once.
        let forwarded = Self.sent(
            routing.received(
                [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker),
                now: .seconds(1)))
        #expect(forwarded == [[Self.workerA, Self.tablet, Self.request(1)]])
        // Another topic nobody serves: unknownStream after the park time.
        let other = try! Topic.event(camera: "cam9", session: "x")
        _ = routing.received([Self.tablet, Self.request(2, other)], peer: .role(.consumer), now: .seconds(1))
        #expect(Self.sent(routing.tick(now: .milliseconds(2_999))).isEmpty)
        let unknown = Self.sent(routing.tick(now: .seconds(3)))
        #expect(unknown.first.flatMap(Self.failure)?.code == .unknownStream)
        #expect(unknown.first.flatMap(Self.failure)?.requestID == 2)
        #expect(routing.counters["replay.refused.unknownStream"] == 1)
        #expect(routing.counters["replay.parked"] == 0)
    }

    @Test func foreignFramesAndForgedRepliesAreRefusedAndCounted() {
        var routing = BrokerReplayRouting()
        _ = routing.received(
            [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker), now: .zero)
        // Foreign frames from a client: a malformedRequest error.
        let foreign = Self.sent(
            routing.received([Self.tablet, Array("hello".utf8)], peer: .role(.consumer), now: .zero))
        #expect(foreign.first.flatMap(Self.failure)?.code == .malformedRequest)
        // Three frames from a peer that serves nothing.
        let three = Self.sent(routing.received([Self.tablet, [1], [2]], peer: .role(.consumer), now: .zero))
        #expect(three.first.flatMap(Self.failure)?.code == .malformedRequest)
        // A lone routing id.
        #expect(Self.sent(routing.received([Self.tablet], peer: .role(.consumer), now: .zero)).isEmpty)
        // A version this broker does not speak.
        var future = Self.request(8)
        future[2] = 9
        let version = Self.sent(routing.received([Self.tablet, future], peer: .role(.consumer), now: .zero))
        #expect(version.first.flatMap(Self.failure)?.code == .unsupportedVersion)
        #expect(version.first.flatMap(Self.failure)?.requestID == 8)
        // A truncated serve frame.
        let serve = Self.serve([(Self.events, Self.stream)])
        let cut = Self.sent(
            routing.received(
                [Self.workerB, Array(serve.dropLast(3))], peer: .role(.worker), now: .zero))
        #expect(cut.first.flatMap(Self.failure)?.code == .malformedRequest)
        // A server writing to a client that asked it nothing, and an entry of another topic.
        #expect(
            Self.sent(
                routing.received(
                    [Self.workerA, Self.tablet] + Self.entry(1), peer: .role(.worker),
                    now: .zero)
            ).isEmpty)
        _ = routing.received([Self.tablet, Self.request(2)], peer: .role(.consumer), now: .zero)
        let other = try! Topic.event(camera: "cam1", session: "right")
        #expect(
            Self.sent(
                routing.received(
                    [Self.workerA, Self.tablet] + Self.entry(2, topic: other),
                    peer: .role(.worker), now: .zero)
            ).isEmpty)
        #expect(routing.counters["replay.refused.malformed"] == 5)
        #expect(routing.counters["replay.refused.reply"] == 2)
    }

    @Test func requestsUnansweredAndServersSilentAreForgottenAndTheBoundsHold() {
        var routing = BrokerReplayRouting(pendingTimeout: .seconds(30), maximumPending: 2, maximumParked: 1)
        _ = routing.received(
            [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker), now: .zero)
        for id in 1...3 as ClosedRange<UInt32> {
            _ = routing.received([Self.tablet, Self.request(id)], peer: .role(.consumer), now: .zero)
        }
        #expect(routing.counters["replay.pending"] == 2)
        #expect(routing.counters["replay.refused.busy"] == 1)
        let other = try! Topic.event(camera: "cam9", session: "x")
        _ = routing.received([Self.tablet, Self.request(4, other)], peer: .role(.consumer), now: .zero)
        _ = routing.received([Self.tablet, Self.request(5, other)], peer: .role(.consumer), now: .zero)
        #expect(routing.counters["replay.refused.busy"] == 2)
        _ = routing.received(
            [Self.workerA, Self.serve([(Self.events, Self.stream)])], peer: .role(.worker),
            now: .seconds(4))
        _ = routing.tick(now: .seconds(31))
        #expect(routing.counters["replay.pending"] == 0)
        #expect(routing.counters["replay.expired"] == 2)
        #expect(routing.counters["replay.servers"] == 0)
        // A late end from the server forgotten: dropped, nothing said to it.
        let late = routing.received(
            [Self.workerA, Self.tablet] + Self.end(1), peer: .role(.worker), now: .seconds(31))
        #expect(Self.sent(late).isEmpty)
        #expect(routing.counters["replay.refused.reply"] == 1)
        #expect(routing.counters["replay.refused.malformed"] == 0)
    }
}

/// Hostile input at the replay port: whatever frames come, from whichever role, the routing
/// answers or drops them, counts them, and keeps routing the real requests.
struct BrokerReplayRoutingFuzzTests {
    @Test func randomFramesFromEveryRoleNeverStopTheRealRequestsAndAreCounted() {
        var generator = SplitMix64(seed: 22)
        var routing = BrokerReplayRouting(maximumPending: 512, maximumParked: 64)
        let peers: [BusPeer?] = [nil, .trusted] + BusRole.allCases.map { .role($0) }
        let real = BrokerReplayRoutingTests.serve([
            (BrokerReplayRoutingTests.events, BrokerReplayRoutingTests.stream)
        ])
        let templates: [[UInt8]] = [
            real, BrokerReplayRoutingTests.request(1), BrokerReplayRoutingTests.end(1)[0],
            BrokerReplayRoutingTests.entry(1)[0],
        ]
        var now = Duration.zero
        var refusedBefore = 0
        for round in 0..<2000 {
            now += .milliseconds(5)
            var frames: [[UInt8]] = [[UInt8(round % 7), 0xEE]]
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                var frame = templates.randomElement(using: &generator)!
                // Cut, flip and grow the template at random.
                if Bool.random(using: &generator), !frame.isEmpty {
                    frame = Array(frame.prefix(Int.random(in: 0..<frame.count, using: &generator)))
                }
                for _ in 0..<Int.random(in: 0...3, using: &generator) where !frame.isEmpty {
                    frame[Int.random(in: 0..<frame.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                if Bool.random(using: &generator) {
                    frame += (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }
                }
                frames.append(frame)
            }
            let outputs = routing.received(frames, peer: peers.randomElement(using: &generator)!, now: now)
            // Every message sent goes to a routing id the routing was given.
            for case .send(let message) in outputs { #expect(!message.isEmpty) }
            _ = routing.tick(now: now)
            if round % 100 == 0 {
                let refused = routing.counters.filter { $0.key.hasPrefix("replay.refused.") }.values.reduce(
                    0, +)
                #expect(refused >= refusedBefore)
                refusedBefore = refused
            }
        }
        #expect(refusedBefore > 100)
        // The real server and client still work.
        _ = routing.received([BrokerReplayRoutingTests.workerA, real], peer: .role(.worker), now: now)
        let forwarded = BrokerReplayRoutingTests.sent(
            routing.received(
                [BrokerReplayRoutingTests.tablet, BrokerReplayRoutingTests.request(99)],
                peer: .role(.consumer), now: now))
        #expect(forwarded.first?.count == 3)
        #expect(routing.counters["replay.pending", default: 0] <= 512)
        #expect(routing.counters["replay.parked", default: 0] <= 64)
    }
}
