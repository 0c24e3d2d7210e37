import KinesiaAnalytics
import KinesiaClient
import KinesiaMotion
import KinesiaWire
import Testing

/// An analytics session's records on an event topic come as ``BusMessage/analytics(_:)``, never
/// as malformed events.
struct BusAnalyticsDecodingTests {
    static let tempo = RepTempo(
        side: .right, number: 2, set: 1, faults: [], peak: 95, low: 3, start: 4, peakTime: 5, end: 6.5,
        timeUp: 0.75, timeAtTop: 0.5, timeDown: 1.25)

    @Test func anAnalyticsRecordComesWithItsOriginAndPoseTime() throws {
        var receiver = Receiver()
        let topic = try Topic.event(camera: "cam0", session: "analytics")
        let values = receiver.receive(
            Sent.json(
                AnalyticsJSON.encode(.repTempo(Self.tempo), at: 6.5), kind: .event, on: topic, sequence: 3))
        guard case .analytics(let received) = values.first, values.count == 1 else {
            Issue.record("not one analytics record: \(values)")
            return
        }
        #expect(received.record == .repTempo(Self.tempo))
        #expect(received.t == 6.5)
        #expect(received.camera == "cam0" && received.session == "analytics")
        #expect(received.sequence == 3)
    }

    @Test func aBrokenAnalyticsRecordIsMalformedWithItsReason() throws {
        var receiver = Receiver()
        let topic = try Topic.event(camera: "cam0", session: "analytics")
        let values = receiver.receive(
            Sent.json(#"{"type":"repTempo","t":1,"side":"up"}"#, kind: .event, on: topic, sequence: 0))
        guard case .malformed(let bad) = values.first else {
            Issue.record("not malformed: \(values)")
            return
        }
        #expect(bad.reason.code == "json.invalidRecord")
    }

    @Test func anUnknownTypeIsStillAnUnknownType() throws {
        var receiver = Receiver()
        let topic = try Topic.event(camera: "cam0", session: "left")
        let values = receiver.receive(
            Sent.json(#"{"type":"repTempi","t":1}"#, kind: .event, on: topic, sequence: 0))
        guard case .malformed(let bad) = values.first else {
            Issue.record("not malformed: \(values)")
            return
        }
        #expect(bad.reason.code == "json.unknownType")
    }
}
