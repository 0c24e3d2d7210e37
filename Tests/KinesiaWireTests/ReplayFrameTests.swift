import Foundation
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// The replay protocol's test vectors (`Fixtures/replay.json`, read by `python -m kinesia.fixtures
/// check-replay` too): each frame as hex, and what it decodes to or the error it must give.
enum ReplayFixtures {
    static let stream = StreamID(0x0123_4567_89AB_CDEF)

    static func request() throws -> ReplayRequest {
        ReplayRequest(
            requestID: 7, topic: try .event(camera: "cam0", session: "left"), stream: stream, from: 42,
            limit: 256)
    }

    /// The event fixture's frames: the original message of the entry vector.
    static func eventFrames() throws -> [[UInt8]] {
        let payload = Array(try Data(contentsOf: fixturesDirectory.appendingPathComponent("event.bin")))
        return [Array("event/cam0/left/".utf8), payload]
    }

    static func replies() throws -> [(name: String, reply: ReplayReply)] {
        [
            (
                "entry",
                .entry(ReplayEntryReply(requestID: 7, stream: stream, sequence: 3, frames: try eventFrames()))
            ),
            (
                "batch-end",
                .end(ReplayBatchEnd(requestID: 7, stream: stream, first: 0, last: 600, next: 298, count: 256))
            ),
            (
                "stream-end",
                .end(ReplayBatchEnd(requestID: 8, stream: stream, first: 0, last: 600, next: 601, count: 47))
            ),
            (
                "error-not-retained",
                .error(
                    ReplayFailure(
                        requestID: 9, code: .notRetained, stream: stream, first: 100, last: 600,
                        message: "sequence 42 is no longer retained; the first available is 100"))
            ),
            (
                "error-unknown-stream",
                .error(
                    ReplayFailure(
                        requestID: 10, code: .unknownStream, stream: StreamID(5), first: 0, last: 0,
                        message: "no stream 0000000000000005 of event/cam0/left/"))
            ),
        ]
    }

    /// Requests that must be refused, with their error code.
    static func invalidRequests() throws -> [(name: String, frame: [UInt8], code: String)] {
        let valid = try request().encoded()
        var badTopic = valid
        badTopic[29] = UInt8(ascii: "x")
        var zeroLimit = valid
        zeroLimit.replaceSubrange(24..<28, with: [0, 0, 0, 0])
        var version = valid
        version[2] = 2
        var reply = valid
        reply[3] = 0x82
        var longTopic = valid
        longTopic[28] = 200
        return [
            ("truncated", Array(valid.prefix(20)), "truncated"),
            ("topic-cut", Array(valid.dropLast()), "truncated"),
            ("foreign", Array("KW\u{1}\u{2}hello".utf8), "badMagic"),
            ("version", version, "unsupportedVersion"),
            ("reply-as-request", reply, "unexpectedType"),
            ("bad-topic", badTopic, "invalidTopic"),
            ("zero-limit", zeroLimit, "invalidLimit"),
            ("trailing", valid + [0], "trailingBytes"),
            ("topic-too-long", longTopic, "truncated"),
            ("empty", [], "truncated"),
        ]
    }

    /// The document both languages read.
    static func document() throws -> String {
        func hex(_ bytes: [UInt8]) -> String {
            "\"" + bytes.map { String(format: "%02x", $0) }.joined() + "\""
        }
        let request = try request()
        var lines: [String] = []
        lines.append(
            "{\"requests\":[{\"name\":\"request\",\"hex\":\(hex(request.encoded())),\"request_id\":7,"
                + "\"topic\":\"event/cam0/left/\",\"stream_id\":\"\(stream)\",\"from\":\"42\",\"limit\":256}")
        for (name, frame, code) in try invalidRequests() {
            lines.append(",{\"name\":\"\(name)\",\"hex\":\(hex(frame)),\"error\":\"\(code)\"}")
        }
        lines.append("],\"replies\":[")
        for (index, (name, reply)) in try replies().enumerated() {
            let frames = reply.frames().map(hex).joined(separator: ",")
            var fields = "\"request_id\":\(reply.requestID)"
            switch reply {
            case .entry(let entry):
                fields +=
                    ",\"type\":\"entry\",\"stream_id\":\"\(entry.stream)\",\"sequence\":\"\(entry.sequence)\""
            case .end(let end):
                fields +=
                    ",\"type\":\"\(end.isStreamEnd ? "streamEnd" : "batchEnd")\",\"stream_id\":\"\(end.stream)\","
                    + "\"first\":\"\(end.first)\",\"last\":\"\(end.last)\",\"next\":\"\(end.next)\",\"count\":\(end.count)"
            case .error(let failure):
                fields +=
                    ",\"type\":\"error\",\"code\":\"\(failure.code)\",\"stream_id\":\"\(failure.stream)\","
                    + "\"first\":\"\(failure.first)\",\"last\":\"\(failure.last)\",\"message\":\"\(failure.message)\""
            }
            lines.append((index > 0 ? "," : "") + "{\"name\":\"\(name)\",\"frames\":[\(frames)],\(fields)}")
        }
        lines.append("]}")
        return lines.joined(separator: "\n") + "\n"
    }
}

@Suite(.serialized)
struct ReplayFrameTests {
    static let fixture = fixturesDirectory.appendingPathComponent("replay.json")

    @Test func theCommittedVectorsAreWhatTheEncoderWritesNow() throws {
        let document = try ReplayFixtures.document()
        if WireFixtureTests.updating {
            try Data(document.utf8).write(to: Self.fixture)
        } else {
            let stored = try String(contentsOf: Self.fixture, encoding: .utf8)
            #expect(stored == document, "Fixtures/replay.json differs from what the encoder writes now")
        }
    }

    @Test func aRequestRoundTripsAndItsBytesAreDocumented() throws {
        let request = try ReplayFixtures.request()
        let bytes = request.encoded()
        #expect(bytes.count == 29 + 16)
        #expect(Array(bytes.prefix(4)) == [0x4B, 0x52, 0x01, 0x01])
        #expect(try ReplayRequest.decode(bytes) == request)
        var current = request
        current.stream = nil
        #expect(Array(current.encoded()[8..<16]) == [UInt8](repeating: 0, count: 8))
        #expect(try ReplayRequest.decode(current.encoded()).stream == nil)
    }

    @Test func malformedRequestsAreRefusedWithTheirCode() throws {
        for (name, frame, code) in try ReplayFixtures.invalidRequests() {
            #expect(throws: ReplayFrameError.self, "\(name)") { try ReplayRequest.decode(frame) }
            do {
                _ = try ReplayRequest.decode(frame)
            } catch {
                #expect(error.code == code, "\(name): \(error)")
            }
        }
    }

    @Test func repliesRoundTripAndAnEntryCarriesTheOriginalFramesByteForByte() throws {
        for (name, reply) in try ReplayFixtures.replies() {
            #expect(try ReplayReply.decode(reply.frames()) == reply, "\(name)")
        }
        let entry = try #require(try ReplayFixtures.replies().first?.reply)
        let frames = entry.frames()
        #expect(Array(frames.dropFirst()) == (try ReplayFixtures.eventFrames()))
        let message = try WireMessage.decode(topic: frames[1], payload: frames[2])
        #expect(message.header.sequence == 3)
    }

    /// Every cut of a reply's fixed part (an error's text is free in length) is refused.
    @Test func everyCutOfEveryReplyIsRefusedNeverCrashes() throws {
        for (name, reply) in try ReplayFixtures.replies() {
            let frames = reply.frames()
            let fixed = if case .error = reply { 33 } else { frames[0].count }
            for length in 0..<fixed {
                var cut = frames
                cut[0] = Array(frames[0].prefix(length))
                #expect(throws: ReplayFrameError.self, "\(name) cut at \(length)") {
                    try ReplayReply.decode(cut)
                }
            }
        }
        #expect(throws: ReplayFrameError.frameCount(0)) { try ReplayReply.decode([]) }
    }

    @Test func theInMemorySourceServesFromARingAndSaysWhatIsNoLongerHeld() throws {
        let topic = try Topic.event(camera: "cam0", session: "left")
        let source = InMemoryReplaySource(capacityPerStream: 100)
        for sequence in 0..<250 as Range<UInt64> {
            source.append(
                topic: topic, stream: ReplayFixtures.stream, sequence: sequence,
                frames: [[UInt8(sequence % 256)]])
        }
        #expect(
            source.streams() == [
                ReplayStreamInfo(topic: topic, stream: ReplayFixtures.stream, first: 150, last: 249)
            ])
        let batch = try source.entries(topic: topic, stream: nil, from: 240, limit: 256)
        #expect(batch.map(\.sequence) == Array(240...249))
        #expect(batch.map(\.frames) == (240...249).map { [[UInt8($0 % 256)]] })
        #expect(throws: ReplaySourceError.notRetained(first: 150, last: 249)) {
            try source.entries(topic: topic, stream: ReplayFixtures.stream, from: 0, limit: 10)
        }
        #expect(throws: ReplaySourceError.unknownStream) {
            try source.entries(topic: topic, stream: StreamID(9), from: 0, limit: 10)
        }
        #expect(try source.entries(topic: topic, stream: nil, from: 250, limit: 10).isEmpty)
    }

    @Test func aHealthReportCarriesTheReplayAnnouncementAndOldReportsStillRead() throws {
        let topic = try Topic.event(camera: "cam0", session: "left")
        let announcement = ReplayAnnouncement(
            endpoint: "ipc:///run/kinesia/replay/worker-1.sock",
            streams: [ReplayStreamInfo(topic: topic, stream: ReplayFixtures.stream, first: 0, last: 41)])
        let report = HealthReport(
            process: "worker-1", role: "worker", pid: 42, uptime: 1.5, counters: ["poses": 3],
            replay: announcement)
        let json = String(decoding: try report.json(), as: UTF8.self)
        #expect(
            json
                == #"{"counters":{"poses":3},"pid":42,"process":"worker-1","replay":{"endpoint":"ipc:///run/kinesia/replay/worker-1.sock","streams":[{"first":0,"last":41,"stream":"0123456789abcdef","topic":"event/cam0/left/"}]},"role":"worker","uptime":1.5}"#
        )
        #expect(try HealthReport(json: json) == report)
        #expect(
            try HealthReport(json: #"{"counters":{},"pid":1,"process":"p","role":"r","uptime":0}"#).replay
                == nil)
        #expect(throws: WireError.self) {
            try HealthReport(
                json:
                    #"{"counters":{},"pid":1,"process":"p","role":"r","uptime":0,"replay":{"endpoint":"x","streams":[{"first":0,"last":1,"stream":"00","topic":"event/a/b/"}]}}"#
            )
        }
    }

    @Test func aSummarisedHealthReportKeepsItsReplayAnnouncementAndFits() throws {
        let streams = try (0..<ReplayAnnouncement.maximumStreams).map {
            ReplayStreamInfo(
                topic: try .event(camera: "cam\($0)", session: "left"), stream: ReplayFixtures.stream,
                first: 0,
                last: 99_999)
        }
        let announcement = ReplayAnnouncement(
            endpoint: "ipc:///run/kinesia/replay/worker-1.sock", streams: streams)
        var counters: [String: Int] = [:]
        for index in 0..<2000 { counters["counter\(index)"] = index }  // no totals to sum into
        let report = HealthReport(
            process: "worker-1", role: "worker", pid: 42, uptime: 1.5, counters: counters,
            replay: announcement)
        let (summary, omitted) = try report.summarised()
        #expect(omitted > 0)
        #expect(summary.replay == announcement)
        #expect(try summary.json().count <= HealthReport.maximumJSONSize)
    }
}
