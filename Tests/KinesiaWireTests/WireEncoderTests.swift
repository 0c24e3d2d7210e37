import Foundation
import KinesiaMotion
import KinesiaWire
import Testing

struct WireEncoderTests {
    @Test func numbersEachTopicFromZeroUnderOneStream() throws {
        var encoder = WireEncoder(streamID: StreamID(77))
        let cam0 = try Topic.pose(camera: "cam0")
        let cam1 = try Topic.pose(camera: "cam1")
        var buffer: [UInt8] = []
        #expect(try encoder.encode(Pose(timestamp: 0), on: cam0, into: &buffer, sentAt: 5).sequence == 0)
        #expect(try encoder.encode(Pose(timestamp: 1), on: cam0, into: &buffer).sequence == 1)
        #expect(try encoder.encode(Pose(timestamp: 0), on: cam1, into: &buffer).sequence == 0)
        let (header, pose) = try PoseCodec.decode(buffer)
        #expect(header.streamID == StreamID(77))
        #expect(pose == Pose(timestamp: 0))
        #expect(encoder.lastSequence(on: cam0) == 1)
    }

    @Test func aMessageThatFailsToEncodeUsesNoSequenceNumber() throws {
        var encoder = WireEncoder()
        let topic = try Topic.pose(camera: "cam0")
        var buffer: [UInt8] = []
        try encoder.encode(Pose(timestamp: 0), on: topic, into: &buffer)
        #expect(throws: WireError.nonFinite(.timestamp)) {
            try encoder.encode(Pose(timestamp: .nan), on: topic, into: &buffer)
        }
        #expect(try encoder.encode(Pose(timestamp: 2), on: topic, into: &buffer).sequence == 1)
    }

    @Test func jsonAndHealthTakeTheirKindFromTheTopic() throws {
        var encoder = WireEncoder()
        var buffer: [UInt8] = []
        let events = try Topic.event(camera: "cam0", session: "left")
        let header = try encoder.encode(
            json: Array(#"{"type":"holdStarted"}"#.utf8), on: events, into: &buffer)
        #expect(header.kind == .event)
        let message = try WireMessage.decode(topic: events.bytes, payload: buffer)
        #expect(message.body == .event(json: #"{"type":"holdStarted"}"#))

        let health = try Topic.health(process: "ingest")
        let report = HealthReport(process: "ingest", role: "ingest", pid: 1, uptime: 0, counters: [:])
        try encoder.encode(report, on: health, into: &buffer)
        #expect(try WireMessage.decode(topic: health.bytes, payload: buffer).body == .health(report))

        #expect(throws: WireError.topicMismatch(topic: .event, payload: .pose)) {
            try encoder.encode(Pose(timestamp: 0), on: events, into: &buffer)
        }
        #expect(throws: WireError.unexpectedKind(.pose)) {
            try encoder.encode(json: Array("{}".utf8), on: try Topic.pose(camera: "c"), into: &buffer)
        }
    }

    @Test func encoderAndTrackerSeeAnUnbrokenStream() throws {
        var encoder = WireEncoder()
        var tracker = SequenceTracker<Topic>(countsMissingStart: true)
        let topic = try Topic.pose(camera: "cam0")
        var buffer: [UInt8] = []
        for index in 0..<500 {
            try encoder.encode(Pose(timestamp: Double(index)), on: topic, into: &buffer)
            let message = try WireMessage.decode(topic: topic.bytes, payload: buffer)
            #expect(tracker.record(message.header, on: message.topic).isDelivered)
        }
        #expect(tracker.totals.delivered == 500)
        #expect(tracker.totals.missing == 0)
    }

    /// The encoder remembers the last topic's slot: topics interleaved, a topic added between
    /// two messages of another (the remembered place is forgotten), and a copy of the encoder
    /// numbering on its own, each keep their own numbers.
    @Test func interleavedTopicsAndCopiesKeepTheirOwnNumbers() throws {
        var encoder = WireEncoder(streamID: StreamID(5))
        let topics = try (0..<40).map { try Topic.event(camera: "cam\($0 % 8)", session: "s\($0)") }
        var buffer: [UInt8] = []
        var expected: [Topic: UInt64] = [:]
        for round in 0..<3 {
            for (index, topic) in topics.enumerated() {
                let header = try encoder.encode(json: Array("{}".utf8), on: topic, into: &buffer)
                #expect(header.sequence == expected[topic, default: 0])
                expected[topic, default: 0] += 1
                // Twice in a row on every third topic: the remembered slot is the one used.
                if round == 1, index % 3 == 0 {
                    #expect(
                        try encoder.encode(json: Array("{}".utf8), on: topic, into: &buffer).sequence
                            == expected[topic]!)
                    expected[topic]! += 1
                }
            }
        }
        let resumed = try Topic.snapshot(camera: "cam0", session: "resumed")
        encoder.continueStream(StreamID(9), on: resumed, after: 41)
        var copy = encoder
        // topics[0] took a message in each of the 3 rounds and a second one in round 1.
        #expect(expected[topics[0]] == 4)
        #expect(try copy.encode(json: Array("{}".utf8), on: topics[0], into: &buffer).sequence == 4)
        let header = try encoder.encode(json: Array("{}".utf8), on: resumed, into: &buffer)
        #expect(header.sequence == 42 && header.streamID == StreamID(9))
        #expect(try encoder.encode(json: Array("{}".utf8), on: topics[0], into: &buffer).sequence == 4)
        #expect(try copy.encode(json: Array("{}".utf8), on: topics[0], into: &buffer).sequence == 5)
        #expect(copy.lastSequence(on: resumed) == 41)
        #expect(encoder.lastSequence(on: resumed) == 42)
    }
}
