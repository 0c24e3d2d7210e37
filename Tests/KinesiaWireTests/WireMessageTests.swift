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
