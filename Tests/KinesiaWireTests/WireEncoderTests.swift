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
}
