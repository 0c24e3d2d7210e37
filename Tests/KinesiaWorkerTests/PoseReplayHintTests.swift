import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import KinesiaWire
import Synchronization
import Testing

@testable import KinesiaWorker

/// A restarted worker asks where its poses were served in the last run at once
/// (``ReplayEndpointHints``), before any heartbeat; a hint that is wrong costs a wait, never a
/// pose given up. Real DEALER and ROUTER sockets over IPC, time passed in.
@Suite struct PoseReplayHintTests {
    private let stream = StreamID(0x5EED)

    private func withServer(_ body: (ZMQContext, ZMQSocket, String, String) throws -> Void) throws {
        try ReplayRouterFixture.with(body)
    }

    /// The request the ROUTER receives within 5 s, with the client's identity.
    private func request(at router: ZMQSocket) throws -> (identity: [UInt8], request: ReplayRequest)? {
        guard let frames = try router.receive(timeout: .seconds(5)), frames.count == 2 else { return nil }
        return (frames[0], try ReplayRequest.decode(frames[1]))
    }

    /// The client's replies, polling for up to `seconds` of wall time (the sockets need it) at
    /// the client time `now`.
    private func replies(_ client: PoseReplayClient, now: Duration, seconds: Double = 0.5)
        -> [PoseReplayClient.Reply]
    {
        let until = Date().addingTimeInterval(seconds)
        var all: [PoseReplayClient.Reply] = []
        while Date() < until {
            all += client.receive(now: now)
            if !all.isEmpty { break }
            usleep(10_000)
        }
        return all
    }

    @Test func aRememberedEndpointIsAskedBeforeAnyHeartbeat() throws {
        try withServer { context, router, endpoint, directory in
            let client = PoseReplayClient(context: context, bus: try BusAddress(parsing: directory))
            defer { client.close() }
            client.remember([stream: endpoint], now: .zero)
            client.send(
                camera: "cam0", PoseReplayRequest(stream: stream, from: 40, waitsForServer: true), id: 7,
                now: .zero)
            let asked = try #require(try request(at: router))
            #expect(asked.request.stream == stream)
            #expect(asked.request.from == 40)
            // It answers: the batch reaches the core as from an announced server.
            let end = ReplayReply.end(
                ReplayBatchEnd(
                    requestID: asked.request.requestID, stream: stream, first: 0, last: 39, next: 40, count: 0
                ))
            try router.send([asked.identity] + end.frames())
            let got = replies(client, now: .milliseconds(10), seconds: 5)
            guard case .ended(let camera, let ended) = got.first else {
                Issue.record("no batch end: \(got)")
                return
            }
            #expect(camera == "cam0" && ended.stream == stream && ended.last == 39)
            #expect(ended.requestID == 7, "named by the core's number, not the wire's")
        }
    }

    @Test func aHintThatDoesNotHoldTheStreamWaitsForTheAnnouncement() throws {
        try withServer { context, router, endpoint, directory in
            let client = PoseReplayClient(context: context, bus: try BusAddress(parsing: directory))
            defer { client.close() }
            client.remember([stream: endpoint], now: .zero)
            let wanted = PoseReplayRequest(stream: stream, from: 7, waitsForServer: true)
            client.send(camera: "cam0", wanted, id: 7, now: .zero)
            let asked = try #require(try request(at: router))
            let refusal = ReplayReply.error(
                ReplayFailure(
                    requestID: asked.request.requestID, code: .unknownStream, stream: stream, first: 0,
                    last: 0,
                    message: "no such stream"))
            try router.send([asked.identity] + refusal.frames())
            // Not a failure (which would give the poses up): nothing reaches the core.
            #expect(replies(client, now: .milliseconds(10)).isEmpty)
            // The real server is announced: the request goes there.
            let real = try ZMQSocket(.router, context: context)
            defer { real.close() }
            let realEndpoint = "ipc://\(directory)/real.sock"
            try real.bind(realEndpoint)
            let announcement = ReplayAnnouncement(
                endpoint: realEndpoint,
                streams: [
                    ReplayStreamInfo(
                        topic: try Topic.pose(camera: "cam0"), stream: stream, first: 0, last: 99)
                ])
            #expect(client.announced(announcement, now: .milliseconds(500)))
            let again = try #require(try request(at: real))
            #expect(again.request.from == 7)
            #expect(client.announcedEndpoints == [stream: realEndpoint])
        }
    }

    @Test func aSilentHintIsForgottenWithoutTimingTheRequestOut() throws {
        try withServer { context, router, endpoint, directory in
            let client = PoseReplayClient(context: context, bus: try BusAddress(parsing: directory))
            defer { client.close() }
            client.remember([stream: endpoint], now: .zero)
            client.send(
                camera: "cam0", PoseReplayRequest(stream: stream, from: 7, waitsForServer: true), id: 7,
                now: .zero)
            _ = try #require(try request(at: router))
            // Past the request timeout: a timed-out request is asked again and counts toward
            // giving the rebuild up; a silent hint is only forgotten.
            #expect(client.receive(now: .milliseconds(1500)).isEmpty)
            // Past the announcement wait, with no announcement: now the request fails.
            let late = client.receive(now: .seconds(11))
            guard case .failed(let camera, let id, _, let first) = late.first else {
                Issue.record("expected a failure after the announcement wait: \(late)")
                return
            }
            #expect(camera == "cam0" && id == 7 && first == nil)
        }
    }

    @Test func hintsReadBackAndForeignLinesArePassedOver() {
        let hints: [StreamID: String] = [
            StreamID(1): "ipc:///run/kinesia/replay-ingest0.sock", StreamID(0xFFFF): "tcp://127.0.0.1:5600",
        ]
        #expect(ReplayEndpointHints.parse(ReplayEndpointHints.format(hints)) == hints)
        let text =
            ReplayEndpointHints.format(hints)
            + "zz not-a-stream\n0000000000000000 ipc:///zero\n00000000000000aa http://x\n00000000000000bb ipc:///a b\n"
            + "00000000000000cc ipc:///ok\u{7}\n"
        #expect(ReplayEndpointHints.parse(text) == hints)
    }

    /// Two workers of one bus share the state directory: before, both renamed one temporary
    /// name, so one of them failed with "No such file or directory" (seen in the 64-camera
    /// benchmark) and each save dropped the other's hints.
    @Test func workersSharingAStateDirectoryKeepEachOthersHints() throws {
        let directory = NSTemporaryDirectory() + "kinesia-hints-\(UInt32.random(in: 0...UInt32.max))"
        try PrivateDirectory.open(directory, creating: true).close()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writers = (0..<2).map { ReplayEndpointHints(state: directory, writer: "worker\($0)") }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let own: [StreamID: String] = [StreamID(UInt64(index + 1)): "ipc:///run/replay-\(index).sock"]
            for _ in 0..<300 {
                do {
                    try writers[index].save(own)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        // The last save of each came after the other's last load or read it: both are kept.
        try writers[0].save([StreamID(1): "ipc:///run/replay-0.sock"])
        #expect(
            writers[1].load() == [
                StreamID(1): "ipc:///run/replay-0.sock", StreamID(2): "ipc:///run/replay-1.sock",
            ])
        // A worker's own announcement wins over what another stored for the same stream.
        try writers[1].save([StreamID(1): "ipc:///run/moved.sock"])
        #expect(writers[0].load()[StreamID(1)] == "ipc:///run/moved.sock")
    }
}
