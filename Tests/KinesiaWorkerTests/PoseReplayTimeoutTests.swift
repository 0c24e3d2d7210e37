import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// Every timeout of the worker's pose replay client, with time passed in (the sockets are real,
/// the clock is the test's): a server that never answers, a publisher that announces no replay,
/// a server that stops announcing itself, a rebuild waiting for its server.
@Suite struct PoseReplayTimeoutTests {
    private let stream = StreamID(0x71DE)

    /// A client on a bus directory, and a ROUTER that receives its requests but never answers.
    private func withSilentServer(_ body: (PoseReplayClient, ZMQSocket, String) throws -> Void) throws {
        try ReplayRouterFixture.with { context, router, endpoint, directory in
            let client = PoseReplayClient(context: context, bus: try BusAddress(parsing: directory))
            defer { client.close() }
            try body(client, router, endpoint)
        }
    }

    private func announcement(_ endpoint: String) throws -> ReplayAnnouncement {
        ReplayAnnouncement(
            endpoint: endpoint,
            streams: [
                ReplayStreamInfo(topic: try Topic.pose(camera: "cam0"), stream: stream, first: 0, last: 99)
            ])
    }

    private func isTimedOut(_ replies: [PoseReplayClient.Reply]) -> Bool {
        guard replies.count == 1, case .timedOut(let camera) = replies[0] else { return false }
        return camera == "cam0"
    }

    private func isFailed(_ replies: [PoseReplayClient.Reply]) -> Bool {
        guard replies.count == 1, case .failed(let camera, _, let failed, let first) = replies[0] else {
            return false
        }
        return camera == "cam0" && failed == stream && first == nil
    }

    @Test func aRebuildRequestAnAnnouncedServerDoesNotAnswerTimesOutAfterOneSecond() throws {
        try withSilentServer { client, router, endpoint in
            client.announced(try announcement(endpoint), now: .zero)
            let request = PoseReplayRequest(stream: stream, from: 10, waitsForServer: true)
            #expect(client.send(camera: "cam0", request, id: 7, now: .zero) == nil)
            // The server got it, and says nothing.
            let asked = try #require(try router.receive(timeout: .seconds(5)))
            #expect(asked.count == 2)
            #expect(client.receive(now: .milliseconds(999)).isEmpty)
            #expect(isTimedOut(client.receive(now: client.requestTimeout)))
            // Once: the request is no longer under way.
            #expect(client.receive(now: .seconds(3)).isEmpty)
        }
    }

    @Test func aLiveRequestIsNotTimedOutByTheClientItsFeedAsksAgainItself() throws {
        try withSilentServer { client, router, endpoint in
            client.announced(try announcement(endpoint), now: .zero)
            #expect(
                client.send(camera: "cam0", PoseReplayRequest(stream: stream, from: 10), id: 7, now: .zero)
                    == nil)
            #expect(try router.receive(timeout: .seconds(5)) != nil)
            // The live delivery's own timeout (PoseFeed.liveRequestTimeout) sends it again.
            #expect(client.receive(now: .seconds(3)).isEmpty)
        }
    }

    @Test func aLiveRequestForAStreamNobodyAnnouncesFailsAtTheEndOfTheGraceAndAtOnceAfterIt() throws {
        try withSilentServer { client, _, _ in
            // Early in the client's life: heartbeats may not have come yet; it waits.
            #expect(
                client.send(camera: "cam0", PoseReplayRequest(stream: stream, from: 10), id: 7, now: .zero)
                    == nil)
            #expect(client.receive(now: .milliseconds(1999)).isEmpty)
            #expect(isFailed(client.receive(now: client.announcementGrace)))
            // After the grace: a publisher that serves no replay; the hole is given up at once.
            let reply = client.send(
                camera: "cam0", PoseReplayRequest(stream: stream, from: 20), id: 7, now: .seconds(2))
            #expect(reply.map { isFailed([$0]) } == true)
        }
    }

    @Test func aRebuildWaitsTenSecondsForItsStreamsServer() throws {
        try withSilentServer { client, _, _ in
            let request = PoseReplayRequest(stream: stream, from: 0, waitsForServer: true)
            #expect(client.send(camera: "cam0", request, id: 7, now: .seconds(5)) == nil)
            #expect(client.receive(now: .seconds(14)).isEmpty, "past the grace, still within its wait")
            #expect(isFailed(client.receive(now: .seconds(5) + client.announcementTimeout)))
        }
    }

    @Test func aServerThatStopsAnnouncingItselfIsGoneAndItsRequestFails() throws {
        try withSilentServer { client, router, endpoint in
            client.announced(try announcement(endpoint), now: .zero)
            // A request renewed by answers would not time out; this one waits at its server.
            #expect(
                client.send(
                    camera: "cam0", PoseReplayRequest(stream: stream, from: 10), id: 7, now: .seconds(4))
                    == nil)
            #expect(try router.receive(timeout: .seconds(5)) != nil)
            #expect(client.sockets.count == 1)
            #expect(client.receive(now: .milliseconds(4999)).isEmpty)
            // Five seconds after its last announcement the server has gone: no answer is coming.
            #expect(isFailed(client.receive(now: client.announcementExpiry)))
            #expect(client.sockets.isEmpty, "its socket is closed")
        }
    }
}
