import KinesiaAnalytics
import KinesiaClient
import KinesiaMotion
import KinesiaStore
import KinesiaWire
import Testing

@testable import KinesiaRecorder

/// What `kinesia record` does with each message, with no database and no socket.
struct RecorderTests {
    static func header(_ kind: PayloadKind, _ sequence: UInt64) -> WireHeader {
        WireHeader(kind: kind, streamID: StreamID(7), sequence: sequence, sentAt: 0)
    }

    static func snapshot(t: Double, sequence: UInt64, reps: Int = 0) throws -> BusMessage {
        var snapshot = MotionSnapshot()
        snapshot.repCount = reps
        return .snapshot(
            BusSnapshot(
                snapshot: snapshot, t: t, topic: try .snapshot(camera: "cam0", session: "left"),
                header: header(.snapshot, sequence)))
    }

    @Test func eventsAndAnalyticsAreStoredUnderTheirStreamTopicAndSequence() throws {
        var recorder = Recorder(snapshotInterval: 0.2)
        let event = BusMessage.event(
            BusEvent(
                event: .holdStarted, t: 1.5, topic: try .event(camera: "cam0", session: "left"),
                header: Self.header(.event, 4)))
        guard case .store(let payload, let key) = recorder.decide(event) else {
            Issue.record("not stored")
            return
        }
        #expect(payload == .event(t: 1.5, .holdStarted))
        #expect(
            key
                == RecordStore.Key(
                    streamID: 7, topic: "event/cam0/left/", sequence: 4, camera: "cam0", session: "left"))
        let record = AnalyticsRecord.repSymmetry(
            RepSymmetry(
                set: 1, pair: 1, left: .init(number: 1, peak: 90, range: 90, timeUnderTension: 2),
                right: .init(number: 1, peak: 88, range: 88, timeUnderTension: 2)))
        let analytics = BusMessage.analytics(
            BusAnalytics(
                record: record, t: 3, topic: try .event(camera: "cam0", session: "analytics"),
                header: Self.header(.event, 0)))
        guard case .store(.analytics(let t, let stored), _) = recorder.decide(analytics) else {
            Issue.record("not stored as analytics")
            return
        }
        #expect(t == 3 && stored == record)
    }

    @Test func snapshotsAreKeptAtTheIntervalAndAtEveryCountChange() throws {
        var recorder = Recorder(snapshotInterval: 0.2)
        var kept: [UInt64] = []
        let times = [0.0, 0.1, 0.19, 0.2, 0.25, 0.3, 0.45]
        for (index, t) in times.enumerated() {
            let reps = t >= 0.3 ? 1 : 0
            if case .store(_, let key) = recorder.decide(
                try Self.snapshot(t: t, sequence: UInt64(index), reps: reps))
            {
                kept.append(key.sequence)
            }
        }
        // 0.0 kept; 0.2 (0.2 after it); 0.3 (the count changed); 0.45 is 0.15 after 0.3: skipped.
        #expect(kept == [0, 3, 5])
        #expect(recorder.snapshotsSkipped == 4)
    }

    @Test func malformedMessagesAndGapsAreCountedAndWarnedAboutNotFatal() throws {
        var recorder = Recorder(snapshotInterval: 0.2)
        let bad = BusMessage.malformed(
            MalformedMessage(topic: "event/cam0/left/", reason: .wire(.frameCount(3))))
        var warnings = 0
        for _ in 0..<12 {
            if case .warn = recorder.decide(bad) { warnings += 1 }
        }
        #expect(recorder.malformed == 12)
        #expect(warnings == 10)
        let gap = BusMessage.gap(
            .missed(topic: try .event(camera: "cam0", session: "left"), count: 3, before: 9))
        guard case .warn(let text) = recorder.decide(gap) else {
            Issue.record("a gap is not warned about")
            return
        }
        #expect(text.contains("3 messages missing"))
        #expect(recorder.counters["gaps"] == 3 && recorder.counters["malformed"] == 12)
    }
}
