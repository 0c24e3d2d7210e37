import KinesiaAnalytics
import KinesiaMotion
import KinesiaWire
import Testing

@testable import KinesiaCLI

/// `kinesia watch` counts an analytics session's records with its events, never as invalid.
struct WatchAnalyticsTests {
    @Test func analyticsRecordsAreCountedByTypeNotInvalid() throws {
        var state = WatchState()
        let topic = try Topic.event(camera: "cam0", session: "analytics")
        let pair = AnalyticsRecord.repSymmetry(
            RepSymmetry(
                set: 1, pair: 1, left: .init(number: 1, peak: 90, range: 88, timeUnderTension: 2),
                right: .init(number: 1, peak: 85, range: 83, timeUnderTension: 2)))
        for (sequence, json) in [AnalyticsJSON.encode(pair, at: 4), #"{"type":"repSymmetry","t":5}"#]
            .enumerated()
        {
            state.apply(
                WireMessage(
                    topic: topic,
                    header: WireHeader(
                        kind: .event, streamID: StreamID(1), sequence: UInt64(sequence), sentAt: 0),
                    body: .event(json: json)),
                at: Double(sequence))
        }
        let session = try #require(state.sessions[WatchState.SessionID(camera: "cam0", session: "analytics")])
        #expect(session.eventCounts == ["repSymmetry": 1])
        #expect(session.analyticsRecordCount == 1)
        // Its progress line counts its records, and expects no snapshot of it.
        #expect(WatchRenderer.progressLines(state, now: 2) == ["cam0/analytics: 1 analytics record"])
        #expect(session.time == 4)
        // The second one lacks its figures: invalid, with the reason.
        #expect(state.invalidMessages == 1)
    }
}
