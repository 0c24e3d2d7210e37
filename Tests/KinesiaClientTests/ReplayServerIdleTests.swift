import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import KinesiaWire
import Testing

/// The replay server's admission timed on a manual clock: a peer that stopped asking is
/// forgotten after the idle timeout, not before, and its place goes to the next one.
struct ReplayServerIdleTests {
    static let topic = try! Topic.event(camera: "cam0", session: "left")

    /// Sends one request from `client` and serves until its reply or `wait` passed (real time:
    /// the sockets' delivery); `nil` when nothing came back (refused).
    static func ask(
        _ client: ZMQSocket, _ server: ReplayServer, source: InMemoryReplaySource, wait: Duration
    ) throws -> ReplayReply? {
        let request = ReplayRequest(requestID: 1, topic: topic, stream: nil, from: 0, limit: 1).encoded()
        try client.send([request])
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: wait)
        while clock.now < deadline {
            try server.serve(from: source)
            if let received = try client.tryReceive() { return try ReplayReply.decode(received) }
            usleep(1000)
        }
        return nil
    }

    @Test func anIdlePeerIsForgottenAfterTheTimeoutOnTheServersClockAndNotBefore() throws {
        let clock = ManualClock()
        let server = try ReplayServer(
            endpoint: "inproc://replay-idle-\(UUID().uuidString)",
            admission: ReplayAdmission(maximumClients: 1, idleTimeout: .seconds(30)), clock: clock)
        defer { server.close() }
        let source = InMemoryReplaySource(capacityPerStream: 10)
        var encoder = WireEncoder(streamID: StreamID(0x5E))
        var payload: [UInt8] = []
        try encoder.encode(json: Array(#"{"type":"formFault","t":0}"#.utf8), on: Self.topic, into: &payload)
        source.append(
            topic: Self.topic, stream: StreamID(0x5E), sequence: 0, frames: [Self.topic.bytes, payload])
        let first = try ZMQSocket(.dealer, context: server.context, linger: .zero)
        let second = try ZMQSocket(.dealer, context: server.context, linger: .zero)
        defer {
            first.close()
            second.close()
        }
        try first.connect(server.endpoint)
        try second.connect(server.endpoint)

        #expect(
            try Self.ask(first, server, source: source, wait: .seconds(5)) != nil, "the first peer is served")
        #expect(try Self.ask(second, server, source: source, wait: .milliseconds(300)) == nil, "no room")
        clock.advance(by: .seconds(29))
        #expect(
            try Self.ask(second, server, source: source, wait: .milliseconds(300)) == nil,
            "the first peer asked 29 s ago: still known")
        #expect(server.counters["replayRefused"] == 2, "\(server.counters)")
        clock.advance(by: .seconds(1))
        #expect(
            try Self.ask(second, server, source: source, wait: .seconds(5)) != nil,
            "30 s without a request: the first peer is forgotten, the second served")
    }
}
