import KinesiaClient
import KinesiaListen
import KinesiaService
import KinesiaWire
import Testing

@testable import KinesiaCLI
@testable import KinesiaRecorder

/// Warnings a hostile peer can trigger at its own rate (issue 19, item 13).
struct WarningThrottleTests {
    @Test func theFirstTenOfAReasonAreShownThenEveryThousandthAndAllCounted() {
        var warnings = WarningThrottle()
        var shown: [Int] = []
        for index in 1...5000 where warnings.admit("lost", "line \(index)") != nil { shown.append(index) }
        #expect(shown == Array(1...10) + [1000, 2000, 3000, 4000, 5000])
        #expect(warnings.counts == ["lost": 5000])
        #expect(warnings.hidden == 5000 - 15)
        #expect(warnings.admit("lost", "x") == nil)
        // Another reason has its own first lines.
        #expect(warnings.admit("malformed.frameCount", "bad") == "bad (1 of this kind so far)")
        #expect(warnings.summary == "lost=5001 malformed.frameCount=1")
    }

    @Test func aHostileServerCannotFloodListenFromWithLostRanges() throws {
        // What `listen --from` logs for a replay server that answers every request with
        // "cannot be had": 4,247 lines in 13 s before.
        let topic = try Topic.event(camera: "cam0", session: "left")
        var warnings = WarningThrottle()
        var lines: [String] = []
        for start in 0..<UInt64(4247) {
            let delivery = ExactlyOnceSubscriber.Delivery.lost(topic: topic, sequences: start..<(start + 1))
            lines += ListenLine.warnings(for: delivery, into: &warnings)
        }
        #expect(lines.count == 10 + 4)
        #expect(
            lines.first
                == "event/cam0/left/: #0..<#1 cannot be had any more (not retained, damaged in the sender's journal, or the sender serves no replay) (1 of this kind so far)"
        )
        #expect(warnings.counts["lost"] == 4247)
        let malformed = ExactlyOnceSubscriber.Delivery.malformed(topic: "event/x/", reason: .frameCount(3))
        #expect(ListenLine.warnings(for: malformed, into: &warnings).count == 1)
    }

    @Test func aRecorderThrottlesItsGapWarningsAndCountsEveryGap() throws {
        var recorder = Recorder(snapshotInterval: 1)
        let gap = BusMessage.gap(
            .missed(topic: try .event(camera: "cam0", session: "left"), count: 1, before: 9))
        var warned = 0
        for _ in 0..<2000 {
            if case .warn = recorder.decide(gap) { warned += 1 }
        }
        #expect(warned == 10 + 2)
        #expect(recorder.counters["gaps"] == 2000)
    }
}
