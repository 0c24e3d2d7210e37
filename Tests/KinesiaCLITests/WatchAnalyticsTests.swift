import KinesiaAnalytics
import KinesiaMotion
import KinesiaWire
import Testing

@testable import KinesiaCLI

/// `kinesia watch` counts an analytics session's records by type, apart from events, never as
/// invalid.
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
            Self.apply(json, on: topic, sequence: sequence, to: &state)
        }
        let session = try #require(state.sessions[WatchState.SessionID(camera: "cam0", session: "analytics")])
        #expect(session.analyticsRecordCounts == ["repSymmetry": 1])
        #expect(session.analyticsRecordCount == 1)
        #expect(session.eventCounts.isEmpty)
        // Its progress line counts its records, and expects no snapshot of it.
        #expect(WatchRenderer.progressLines(state, now: 2) == ["cam0/analytics: 1 analytics record"])
        #expect(session.time == 4)
        // The second one lacks its figures: invalid, with the reason.
        #expect(state.invalidMessages == 1)
    }

    /// The end summary names an analytics session's records as records, by type, without the
    /// reps, best value and events that only an analyzer session has; an analyzer session
    /// beside it keeps its own lines.
    @Test func theSummaryListsAnAnalyticsSessionsRecordsNotEvents() throws {
        var state = WatchState()
        let analytics = try Topic.event(camera: "cam0", session: "analytics")
        let left = try Topic.event(camera: "cam0", session: "left")
        let tempo = AnalyticsRecord.repTempo(
            RepTempo(
                side: .left, number: 1, set: 1, faults: [], peak: 140, low: 20, start: 0.5, peakTime: 2,
                end: 3.5, timeUp: 1, timeAtTop: 1, timeDown: 1))
        let messages: [(Topic, String)] = [
            (analytics, AnalyticsJSON.encode(tempo, at: 3)), (analytics, AnalyticsJSON.encode(tempo, at: 6)),
            (left, MotionJSON.encode(.formFault(.keepElbowStraight), at: 2)),
        ]
        for (sequence, (topic, json)) in messages.enumerated() {
            Self.apply(json, on: topic, sequence: sequence, to: &state)
        }
        let lines = WatchRenderer.summaryLines(state)
        #expect(lines.contains("cam0/analytics"))
        #expect(lines.contains("  analytics records 2: 2 repTempo"))
        #expect(lines.contains("  events          1: 1 formFault"))
        // One reps block only: the analyzer session's.
        #expect(lines.filter { $0.hasPrefix("  clean reps") }.count == 1)
        #expect(!lines.contains { $0.hasPrefix("  events") && $0.contains("repTempo") })
    }

    /// Hands `state` an event payload as the bus would, numbered `sequence` of one stream and
    /// heard at `sequence` seconds.
    private static func apply(_ json: String, on topic: Topic, sequence: Int, to state: inout WatchState) {
        state.apply(
            WireMessage(
                topic: topic,
                header: WireHeader(
                    kind: .event, streamID: StreamID(1), sequence: UInt64(sequence), sentAt: 0),
                body: .event(json: json)),
            at: Double(sequence))
    }
}
