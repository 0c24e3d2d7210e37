import Foundation
import KinesiaMotion
import KinesiaWire
import Testing

struct WireMessageTests {
    @Test func everyKindOfMessageRoundTripsThroughBothFrames() throws {
        let messages = try WireFixtures.valid().map(\.message)
        for message in messages {
            let (topic, payload) = try message.encode()
            #expect(topic == message.topic.bytes)
            #expect(try WireMessage.decode(topic: topic, payload: payload) == message)
        }
    }

    @Test func aPayloadOnATopicOfAnotherKindIsRefused() throws {
        let pose = try PoseCodec.encode(Pose(timestamp: 1), header: header(.pose))
        #expect(throws: WireError.topicMismatch(topic: .event, payload: .pose)) {
            try WireMessage.decode(topic: Array("event/cam0/left/".utf8), payload: pose)
        }
        let message = WireMessage(
            topic: try .health(process: "p"), header: header(.event), body: .event(json: "{}"))
        #expect(throws: WireError.topicMismatch(topic: .health, payload: .event)) { try message.encode() }
        #expect(
            WireError.topicMismatch(topic: .pose, payload: .event).description
                == "an event payload on a pose topic")
        let wrongHeader = WireMessage(
            topic: try .event(camera: "c", session: "s"), header: header(.snapshot), body: .event(json: "{}"))
        #expect(throws: WireError.unexpectedKind(.snapshot)) { try wrongHeader.encode() }
    }

    @Test func anInvalidTopicFrameIsRefusedWithItsReason() throws {
        let pose = try PoseCodec.encode(Pose(timestamp: 1), header: header(.pose))
        #expect(throws: WireError.invalidTopic(.missingTrailingSlash)) {
            try WireMessage.decode(topic: Array("pose/cam0".utf8), payload: pose)
        }
    }

    @Test func aHealthPayloadThatIsNotAReportIsInvalidJSON() throws {
        let payload = try JSONPayloadCodec.encode(json: #"{"pid":"x"}"#, header: header(.health))
        #expect {
            try WireMessage.decode(topic: Array("health/p/".utf8), payload: payload)
        } throws: { error in
            (error as? WireError)?.code == "invalidJSON"
        }
    }

    @Test func errorCodesAndDescriptionsAreStable() {
        #expect(WireError.truncated(needed: 30, available: 29).code == "truncated")
        #expect(WireError.nonFinite(.x(.leftKnee)).description == "leftKnee.x is not a finite number")
        #expect(WireError.invalidTopic(.empty).code == "invalidTopic")
        #expect(WireError.unknownJoint(index: 42).description.contains("42"))
    }
}

/// Events and snapshots travel as `MotionJSON` lines: what a worker publishes, a consumer reads
/// back to the same value.
struct MotionJSONOverTheWireTests {
    static let events: [MotionEvent] = [
        .repCompleted(Rep(peak: 92.25, faults: [], start: 1, end: 2.5)),
        .repRejected(Rep(peak: 0.1, faults: [.keepTrunkUpright, .keepElbowStraight], start: 3, end: 4.125)),
        .holdStarted,
        .formFault(.keepShouldersLevel),
        .visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftElbow, .leftWrist])),
        .setupChanged([.tooFar, .lowConfidence]),
        .baselineCompleted(101.5),
    ]

    @Test(arguments: events)
    func everyEventSurvivesTheBus(event: MotionEvent) throws {
        var encoder = WireEncoder()
        var buffer: [UInt8] = []
        let topic = try Topic.event(camera: "cam0", session: "left")
        try encoder.encode(json: Array(MotionJSON.encode(event, at: 7.25).utf8), on: topic, into: &buffer)
        let message = try WireMessage.decode(topic: topic.bytes, payload: buffer)
        guard case .event(let json) = message.body else {
            Issue.record("not an event: \(message.body)")
            return
        }
        let (t, decoded) = try MotionJSON.decodeEvent(json)
        #expect(t == 7.25)
        #expect(decoded == event)
    }

    @Test func fixtureEventAndSnapshotAreMotionJSON() throws {
        let (t, event) = try MotionJSON.decodeEvent(WireFixtures.eventJSON)
        #expect(t == 2.5)
        #expect(event == .repCompleted(Rep(peak: 92.25, faults: [], start: 1, end: 2.5)))
        #expect(MotionJSON.encode(event, at: t) == WireFixtures.eventJSON)
        let (time, snapshot) = try MotionJSON.decodeSnapshot(WireFixtures.snapshotJSON)
        #expect(time == 4)
        #expect(snapshot.repCount == 3)
        #expect(snapshot.setupIssues == [.tooFar])
        #expect(snapshot.baseline == BaselineProgress(completed: 1, target: 3, value: 92.25))
    }
}
