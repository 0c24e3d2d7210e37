import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// The replay server over real sockets (a ROUTER in this process, DEALER clients): batches
/// bounded by the request, the original frames byte for byte, errors for what it cannot serve,
/// and hostile requests answered and counted, never a crash.
struct ReplayServerTests {
    static let topic = try! Topic.event(camera: "cam0", session: "left")

    /// A server over inproc with `count` events of one stream, and a connected DEALER.
    final class Harness {
        let server: ReplayServer
        let client: ZMQSocket
        let source = InMemoryReplaySource(capacityPerStream: 1000)
        var published: [[[UInt8]]] = []

        init(count: Int) throws {
            server = try ReplayServer(endpoint: "inproc://replay-\(UUID().uuidString)")
            // An inproc client connects in the server's own context.
            client = try ZMQSocket(.dealer, context: server.context)
            try client.connect(server.endpoint)
            var encoder = WireEncoder(streamID: Sent.stream)
            var payload: [UInt8] = []
            for index in 0..<count {
                try encoder.encode(
                    json: Array("{\"type\":\"formFault\",\"t\":\(index)}".utf8), on: ReplayServerTests.topic,
                    into: &payload)
                let frames = [ReplayServerTests.topic.bytes, payload]
                published.append(frames)
                source.append(
                    topic: ReplayServerTests.topic, stream: Sent.stream, sequence: UInt64(index),
                    frames: frames)
            }
        }

        deinit {
            client.close()
            server.close()
        }

        /// Sends `frames` and serves; returns the replies until an end or an error.
        func ask(_ frames: [[UInt8]]) throws -> [ReplayReply] {
            try client.send(frames)
            var replies: [ReplayReply] = []
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(5))
            while clock.now < deadline {
                try server.serve(from: source)
                while let received = try client.tryReceive() {
                    let reply = try ReplayReply.decode(received)
                    replies.append(reply)
                    if case .entry = reply { continue }
                    return replies
                }
                usleep(1000)
            }
            return replies
        }
    }

    @Test func aRequestGetsAtMostItsLimitInOrderByteForByteThenAnEnd() throws {
        let harness = try Harness(count: 600)
        let request = ReplayRequest(
            requestID: 5, topic: Self.topic, stream: Sent.stream, from: 10, limit: 1000)
        let replies = try harness.ask([request.encoded()])
        let entries = replies.compactMap { if case .entry(let entry) = $0 { entry } else { nil } }
        #expect(entries.count == 256)  // the server's batch, however much was asked
        #expect(entries.map(\.sequence) == Array(10..<266))
        #expect(entries.map(\.frames) == Array(harness.published[10..<266]))
        #expect(entries.allSatisfy { $0.requestID == 5 })
        guard case .end(let end) = replies.last else {
            Issue.record("no end: \(String(describing: replies.last))")
            return
        }
        #expect(end.next == 266 && end.last == 599 && !end.isStreamEnd && end.count == 256)

        let tail = try harness.ask([
            ReplayRequest(requestID: 6, topic: Self.topic, stream: nil, from: 590, limit: 256).encoded()
        ])
        guard case .end(let last) = tail.last else {
            Issue.record("no end")
            return
        }
        #expect(tail.count == 11 && last.isStreamEnd && last.next == 600)
    }

    @Test func unknownStreamsAndForgottenSequencesAreClearErrors() throws {
        let harness = try Harness(count: 1500)  // the ring holds the last 1000: 500...1499
        let old = try harness.ask([
            ReplayRequest(requestID: 1, topic: Self.topic, stream: Sent.stream, from: 0, limit: 10).encoded()
        ])
        #expect(old.count == 1)
        guard case .error(let failure) = old.first else {
            Issue.record("no error for a sequence no longer retained: \(old)")
            return
        }
        #expect(failure.code == .notRetained && failure.first == 500 && failure.last == 1499)

        let other = try harness.ask([
            ReplayRequest(requestID: 2, topic: Self.topic, stream: StreamID(99), from: 0, limit: 10).encoded()
        ])
        guard case .error(let unknown) = other.first else {
            Issue.record("no error for an unknown stream: \(other)")
            return
        }
        #expect(unknown.code == .unknownStream && unknown.requestID == 2)
        #expect(harness.server.counters["replay.notRetained"] == 1)
        #expect(harness.server.counters["replay.unknownStream"] == 1)
    }

    @Test func hostileRequestsGetAnErrorAreCountedAndTheServerGoesOn() throws {
        let harness = try Harness(count: 10)
        var generator = SystemRandomNumberGenerator()
        let valid = ReplayRequest(requestID: 3, topic: Self.topic, stream: nil, from: 0, limit: 5).encoded()
        var hostile: [[[UInt8]]] = [[[]], [Array("hello".utf8)], [valid, valid], [Array(valid.prefix(12))]]
        for _ in 0..<200 {
            var frame = valid
            frame[Int.random(in: 0..<frame.count, using: &generator)] ^= UInt8.random(
                in: 1...255, using: &generator)
            if Bool.random(using: &generator) {
                frame = Array(frame.prefix(Int.random(in: 0..<frame.count, using: &generator)))
            }
            hostile.append([frame])
        }
        var errors = 0
        for frames in hostile {
            let replies = try harness.ask(frames)
            #expect(!replies.isEmpty, "no answer to \(frames)")
            if case .error = replies.last { errors += 1 }
        }
        #expect(errors >= 4)
        let refused = ["malformedRequest", "unsupportedVersion", "unknownStream", "notRetained"]
            .map { harness.server.counters["replay.\($0)"] ?? 0 }.reduce(0, +)
        #expect(refused == errors)
        // Still serving.
        let replies = try harness.ask([valid])
        #expect(replies.count == 6)
    }

    @Test func theEndpointIsAnOwnerOnlyIPCDirectoryOrATCPPortBesideALocalBroker() throws {
        let directory = NSTemporaryDirectory() + "kinesia-replay-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ipc = try ReplayServer.endpoint(bus: try BusAddress(parsing: directory), process: "worker-1")
        #expect(ipc == "ipc://\(directory)/replay/worker-1.sock")
        let mode =
            try FileManager.default.attributesOfItem(atPath: directory + "/replay")[.posixPermissions] as? Int
        #expect(mode == 0o700)

        let tcp = try #require(
            try ReplayServer.endpoint(
                bus: try BusAddress(parsing: "tcp://127.0.0.1:5550"), process: "worker-1"))
        #expect(tcp == "tcp://127.0.0.1:*")
        let server = try ReplayServer(endpoint: tcp)
        defer { server.close() }
        let port = try #require(server.endpoint.split(separator: ":").last.flatMap { Int($0) })
        #expect(server.endpoint == "tcp://127.0.0.1:\(port)" && port > 0)
    }

    /// On a TCP bus with CURVE keys a replay endpoint would be outside the broker's
    /// authentication: none is served, none is asked for.
    @Test func noReplayIsServedOrAskedForOnACURVEBus() throws {
        var curve = try BusAddress(parsing: "tcp://10.0.0.2:5550")
        #expect(ReplayServer.servesReplay(on: curve))
        let broker = try CurveKeyPair.generate()
        curve.credentials = BusCredentials(
            key: BusKey(name: "ward", role: .consumer, keyPair: try CurveKeyPair.generate()),
            serverKey: BusPublicKey(name: "broker", role: .broker, key: broker.publicKey))
        #expect(!ReplayServer.servesReplay(on: curve))
        #expect(try ReplayServer.endpoint(bus: curve, process: "worker-1") == nil)
    }
}

/// The connections beyond a server's cap, refused at their handshake (issue 19, item 8: a
/// refused DEALER used to be disconnected after it was accepted and came back every 100 ms).
struct ReplayGateTests {
    @Test(.timeLimit(.minutes(3)))
    func clientsBeyondTheCapAreRefusedOnceAndDoNotComeBackWhileThoseAdmittedAreServed() async throws {
        try await offCooperativePool {
            let directory = BusAddressTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let server = try ReplayServer(
                endpoint: "ipc://\(directory)/replay.sock",
                connections: ReplayConnections(maximumConnections: 2))
            defer { server.close() }
            let source = InMemoryReplaySource()
            let topic = ReplayServerTests.topic
            source.append(topic: topic, stream: Sent.stream, sequence: 0, frames: [topic.bytes, [1]])
            let context = try ZMQContext()
            defer { context.terminate() }
            let request = ReplayRequest(requestID: 1, topic: topic, stream: Sent.stream, from: 0, limit: 1)
            var clients: [ZMQSocket] = []
            defer { for client in clients { client.close() } }
            for _ in 0..<5 {
                let client = try ZMQSocket(.dealer, context: context, linger: .zero)
                try client.connect(server.endpoint)
                _ = try client.trySend([request.encoded()])
                clients.append(client)
                usleep(50_000)  // in turn: the first two are the ones admitted
            }
            // Served for 1.5 s: fifteen reconnect intervals of a refused client.
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .milliseconds(1500))
            var answered = Set<Int>()
            while clock.now < deadline {
                try server.serve(from: source)
                for (index, client) in clients.enumerated() {
                    while try client.tryReceive() != nil { answered.insert(index) }
                }
                usleep(2000)
            }
            #expect(answered == [0, 1])
            #expect(server.counters["replayConnections"] == 2, "\(server.counters)")
            // Refused once each; a client that saw its connection close before it read the refusal
            // retries as after a broken connection, and is refused again (seen once in a loaded
            // run). Shut down instead of refused, the three would have come back 45 times.
            let refused = server.counters["replayConnectionsRefused", default: 0]
            #expect((3...6).contains(refused), "refused once each: \(server.counters)")

            // One admitted client leaves: a new one takes its place.
            clients[0].close()
            usleep(200_000)
            let late = try ZMQSocket(.dealer, context: context, linger: .zero)
            clients.append(late)
            try late.connect(server.endpoint)
            _ = try late.trySend([request.encoded()])
            var lateAnswer: [[UInt8]]?
            let lateDeadline = clock.now.advanced(by: .seconds(5))
            while lateAnswer == nil, clock.now < lateDeadline {
                try server.serve(from: source)
                lateAnswer = try late.tryReceive()
                usleep(2000)
            }
            #expect(lateAnswer != nil, "\(server.counters)")
            #expect(server.counters["replayConnectionsRefused", default: 0] <= 6, "\(server.counters)")
        }
    }
}
