import Foundation
import KinesiaMotion
import KinesiaSystem
import KinesiaWire
import Testing

@testable import KinesiaListen

struct ListenLineTests {
    private let header = WireHeader(kind: .event, streamID: StreamID(0xabc), sequence: 7, sentAt: 0)

    @Test func anEventKeepsItsOwnFieldsAfterTopicStreamAndSeq() throws {
        let json = MotionJSON.encode(.formFault(.keepTrunkUpright), at: 2.5)
        let message = WireMessage(
            topic: try Topic.event(camera: "cam0", session: "left"), header: header, body: .event(json: json))
        #expect(
            ListenLine.json(message)
                == #"{"topic":"event/cam0/left/","stream":"0000000000000abc","seq":7,"type":"formFault","t":2.5,"fault":"keepTrunkUpright"}"#
        )
        #expect(ListenLine.text(message) == "event/cam0/left/ #7 " + json)
    }

    @Test func aPoseIsPrintedInTheRecordingsForm() throws {
        let pose = Pose(
            points: [.leftKnee: CGPoint(x: 10, y: 20)], timestamp: 0.5,
            imageSize: CGSize(width: 640, height: 480),
            confidence: [.leftKnee: 0.9])
        var poseHeader = header
        poseHeader.kind = .pose
        let message = WireMessage(
            topic: try Topic.pose(camera: "cam0"), header: poseHeader, body: .pose(pose))
        #expect(
            ListenLine.json(message)
                == #"{"topic":"pose/cam0/","stream":"0000000000000abc","seq":7,"#
                + PoseJSONLine.encode(pose).dropFirst())
        #expect(ListenLine.text(message) == "pose/cam0/ #7 t=0.5 joints=1 640x480")
    }

    @Test func aHealthReportMergesItsFields() throws {
        var healthHeader = header
        healthHeader.kind = .health
        let report = HealthReport(process: "w", role: "worker", pid: 42, uptime: 1.5, counters: ["poses": 3])
        let message = WireMessage(
            topic: try Topic.health(process: "w"), header: healthHeader, body: .health(report))
        let line = ListenLine.json(message)
        #expect(
            line.hasPrefix(
                #"{"topic":"health/w/","stream":"0000000000000abc","seq":7,"counters":{"poses":3}"#))
        #expect(line.contains(#""role":"worker""#))
        #expect(ListenLine.text(message) == "health/w/ #7 worker pid=42 up=1.5s poses=3")
    }

    /// The line's values, read back with Foundation's parser (which takes the last of duplicate
    /// keys): `nil` when the line is not one JSON object.
    static func parsed(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    @Test(arguments: [
        #"{"topic":"event/cam9/forged/","type":"holdStarted","t":1}"#,
        #"{"type":"holdStarted","t":1,"seq":99999}"#,
        #"{"stream":"0000000000000001","type":"holdStarted","t":1}"#,
    ])
    func aPayloadNeverReplacesTheRealTopicStreamOrSeq(_ body: String) throws {
        let message = WireMessage(
            topic: try Topic.event(camera: "cam0", session: "left"), header: header, body: .event(json: body))
        let line = ListenLine.json(message)
        let values = try #require(Self.parsed(line), "not one JSON object: \(line)")
        #expect(values["topic"] as? String == "event/cam0/left/")
        #expect(values["stream"] as? String == "0000000000000abc")
        #expect(values["seq"] as? Int == 7)
        // Each key once: what any JSON reader takes, not only Foundation's.
        for key in ["\"topic\":", "\"stream\":", "\"seq\":"] {
            #expect(line.components(separatedBy: key).count == 2, "\(key) twice in \(line)")
        }
        // Nothing of the payload is lost: it is given whole.
        #expect(values["payload"] as? String == body)
    }

    @Test(arguments: [
        #"{"type":"holdStarted","t":1}{"type":"holdStarted","t":2}"#,
        #"{"type":"holdStarted","t":1},"extra":{"#,
        #"{"type":"holdStarted","type":"formFault","t":1}"#,
        "[1,2]",
        "not json",
    ])
    func aPayloadThatIsNotOneJSONObjectIsGivenAsAStringAndTheLineStaysValid(_ body: String) throws {
        let message = WireMessage(
            topic: try Topic.event(camera: "cam0", session: "left"), header: header, body: .event(json: body))
        let line = ListenLine.json(message)
        let values = try #require(Self.parsed(line), "not one JSON object: \(line)")
        #expect(values["payload"] as? String == body)
        #expect(values["seq"] as? Int == 7 && values.count == 4)
    }

    @Test func anEmptyObjectAddsNoComma() {
        #expect(ListenLine.merge("{\"a\":1", "{ }") == "{\"a\":1}")
    }
}
