import KinesiaWire
import Testing

/// Sequence numbers and counters from the bus at the edges of their types: a peer can send any
/// value, and none may trap, wrap into a number already used, or make a report unreadable.
struct SequenceEdgeTests {
    @Test func aRangesWidthIsTotal() {
        #expect((0..<UInt64.max).width == .max)
        #expect((5..<5 as Range<UInt64>).width == 0)
        let half = UInt64(1) << 63
        #expect((half..<UInt64.max).width == half - 1)
    }

    @Test func saturatingAdditionStopsAtTheTypesEnds() {
        var missed: UInt64 = .max - 1
        missed.addSaturating(5)
        #expect(missed == .max)
        var lost = Int.max - 2
        lost.addSaturating(Int.max)
        #expect(lost == .max)
        var down = Int.min + 1
        down.addSaturating(-5)
        #expect(down == .min)
        var plain = 40
        plain.addSaturating(2)
        #expect(plain == 42)
    }

    @Test func saturatingSubtractionStopsAtTheTypesEnds() {
        var missing: UInt64 = 0
        missing.subtractSaturating(1)
        #expect(missing == 0)
        var low = Int.min + 1
        low.subtractSaturating(5)
        #expect(low == .min)
        var high = Int.max - 1
        high.subtractSaturating(-5)
        #expect(high == .max)
        var plain: UInt64 = 42
        plain.subtractSaturating(2)
        #expect(plain == 40)
    }

    @Test func theTrackerJudgesUInt64MaxWithoutTrapping() {
        var tracker = SequenceTracker<String>()
        #expect(
            tracker.record(stream: StreamID(1), sequence: 0, on: "t") == .newStream(restart: false, missed: 0)
        )
        #expect(tracker.record(stream: StreamID(1), sequence: .max, on: "t") == .gap(missed: .max - 1))
        #expect(tracker.record(stream: StreamID(1), sequence: .max, on: "t") == .duplicate)
        #expect(tracker.reconcile(stream: StreamID(1), through: .max, on: "t") == 0)
        var other = SequenceTracker<String>()
        _ = other.record(stream: StreamID(2), sequence: 0, on: "t")
        #expect(other.reconcile(stream: StreamID(2), through: .max, on: "t") == .max)
        #expect(other.totals.missing == .max)
    }

    /// A counter driven past 2^53 (a gap of 2^60 from one forged pose) is written and read as
    /// the largest exact value: the report stays readable, and the process stays in `status`.
    @Test func aHealthReportWithHugeCountersStaysReadable() throws {
        let report = HealthReport(
            process: "worker", role: "worker", pid: 1, uptime: 1,
            counters: ["gapsSeen": Int(clamping: UInt64(1) << 60), "lost": .max, "poses": 12, "low": .min])
        let decoded = try HealthReport(json: String(decoding: try report.json(), as: UTF8.self))
        #expect(decoded.counters["poses"] == 12)
        #expect(decoded.counters["gapsSeen"] == 9_007_199_254_740_991)
        #expect(decoded.counters["lost"] == 9_007_199_254_740_991)
        #expect(decoded.counters["low"] == -9_007_199_254_740_991)
        // As an older writer (or another language) wrote it.
        let foreign = try HealthReport(
            json:
                #"{"counters":{"gaps":1152921504606846976,"huge":1e300},"pid":7,"process":"p","role":"worker","uptime":1}"#
        )
        #expect(foreign.counters["gaps"] == 9_007_199_254_740_991)
        #expect(foreign.counters["huge"] == 9_007_199_254_740_991)
        #expect(throws: WireError.self) {
            try HealthReport(
                json: #"{"counters":{"half":0.5},"pid":7,"process":"p","role":"worker","uptime":1}"#)
        }
    }
}
