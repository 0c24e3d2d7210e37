import KinesiaTestSupport
import KinesiaWire
import Testing

struct SequenceTrackerTests {
    let stream = StreamID(0xA)
    let topic = "pose/cam0/"

    @Test func firstMessageStartsAStreamAndTheNextAreInOrder() {
        var tracker = SequenceTracker<String>()
        #expect(
            tracker.record(stream: stream, sequence: 0, on: topic) == .newStream(restart: false, missed: 0))
        #expect(tracker.record(stream: stream, sequence: 1, on: topic) == .inOrder)
        #expect(tracker.record(stream: stream, sequence: 2, on: topic) == .inOrder)
        #expect(tracker.totals.delivered == 3)
        #expect(tracker.totals.missing == 0)
        #expect(tracker.stream(for: topic) == stream)
    }

    @Test func aLateJoinerStartsMidStreamWithoutAGap() {
        var tracker = SequenceTracker<String>()
        #expect(
            tracker.record(stream: stream, sequence: 500, on: topic) == .newStream(restart: false, missed: 0))
        #expect(tracker.record(stream: stream, sequence: 501, on: topic) == .inOrder)
        #expect(tracker.record(stream: stream, sequence: 499, on: topic) == .stale)
        #expect(tracker.totals.missing == 0)
        #expect(tracker.totals.stale == 1)
    }

    @Test func countingTheStartReportsMessagesLostBeforeTheFirst() {
        var tracker = SequenceTracker<String>(countsMissingStart: true)
        #expect(
            tracker.record(stream: stream, sequence: 3, on: topic) == .newStream(restart: false, missed: 3))
        #expect(tracker.totals.missing == 3)
        #expect(tracker.record(stream: stream, sequence: 1, on: topic) == .outOfOrder)
        #expect(tracker.totals.missing == 2)
    }

    @Test func aGapCountsTheMissingMessages() {
        var tracker = SequenceTracker<String>()
        tracker.record(stream: stream, sequence: 0, on: topic)
        #expect(tracker.record(stream: stream, sequence: 5, on: topic) == .gap(missed: 4))
        #expect(tracker.totals.missing == 4)
        #expect(tracker.totals.delivered == 2)
    }

    @Test func aRepeatedMessageIsADuplicate() {
        var tracker = SequenceTracker<String>()
        tracker.record(stream: stream, sequence: 0, on: topic)
        tracker.record(stream: stream, sequence: 1, on: topic)
        #expect(tracker.record(stream: stream, sequence: 1, on: topic) == .duplicate)
        #expect(tracker.record(stream: stream, sequence: 0, on: topic) == .duplicate)
        #expect(!SequenceResult.duplicate.isDelivered)
        #expect(tracker.totals.duplicates == 2)
        #expect(tracker.totals.delivered == 2)
    }

    @Test func aLateMessageIsOutOfOrderAndNoLongerMissing() {
        var tracker = SequenceTracker<String>()
        tracker.record(stream: stream, sequence: 0, on: topic)
        #expect(tracker.record(stream: stream, sequence: 3, on: topic) == .gap(missed: 2))
        #expect(tracker.record(stream: stream, sequence: 2, on: topic) == .outOfOrder)
        #expect(tracker.record(stream: stream, sequence: 2, on: topic) == .duplicate)
        #expect(tracker.record(stream: stream, sequence: 1, on: topic) == .outOfOrder)
        #expect(tracker.record(stream: stream, sequence: 4, on: topic) == .inOrder)
        let totals = tracker.totals
        #expect(totals.missing == 0)
        #expect(totals.outOfOrder == 2)
        #expect(totals.duplicates == 1)
        #expect(totals.delivered == 5)
    }

    @Test func aNewStreamIdIsARestartNotAGap() {
        var tracker = SequenceTracker<String>()
        for sequence in 0..<10 { tracker.record(stream: stream, sequence: UInt64(sequence), on: topic) }
        let restarted = StreamID(0xB)
        #expect(
            tracker.record(stream: restarted, sequence: 0, on: topic) == .newStream(restart: true, missed: 0))
        #expect(tracker.record(stream: restarted, sequence: 1, on: topic) == .inOrder)
        #expect(tracker.totals.restarts == 1)
        #expect(tracker.totals.missing == 0)
        #expect(tracker.totals(for: topic).restarts == 1)
        #expect(tracker.totals(for: topic).delivered == 12)
        #expect(tracker.stream(for: topic) == restarted)
    }

    @Test func topicsAreTrackedIndependently() throws {
        var tracker = SequenceTracker<Topic>()
        let cam0 = try Topic.pose(camera: "cam0")
        let cam1 = try Topic.pose(camera: "cam1")
        tracker.record(stream: stream, sequence: 0, on: cam0)
        tracker.record(stream: stream, sequence: 0, on: cam1)
        #expect(tracker.record(stream: stream, sequence: 1, on: cam0) == .inOrder)
        #expect(tracker.record(stream: stream, sequence: 3, on: cam1) == .gap(missed: 2))
        #expect(tracker.totals(for: cam0).missing == 0)
        #expect(tracker.totals(for: cam1).missing == 2)
        #expect(tracker.totals.missing == 2)
        #expect(Set(tracker.keys) == [cam0, cam1])
    }

    @Test func messagesOlderThanTheWindowAreStale() {
        var tracker = SequenceTracker<String>(window: 64)
        #expect(tracker.window == 64)
        tracker.record(stream: stream, sequence: 0, on: topic)
        #expect(tracker.record(stream: stream, sequence: 100, on: topic) == .gap(missed: 99))
        #expect(tracker.record(stream: stream, sequence: 30, on: topic) == .stale)
        #expect(tracker.record(stream: stream, sequence: 37, on: topic) == .outOfOrder)
        #expect(tracker.totals.missing == 98)
    }

    @Test func reconcilingWithTheSendersLastSequenceCountsTheLostTail() {
        var tracker = SequenceTracker<String>()
        for sequence: UInt64 in [0, 1, 2, 3] { tracker.record(stream: stream, sequence: sequence, on: topic) }
        #expect(tracker.reconcile(stream: stream, through: 9, on: topic) == 6)
        #expect(tracker.totals.missing == 6)
        #expect(tracker.reconcile(stream: stream, through: 9, on: topic) == 0)
        #expect(tracker.reconcile(stream: StreamID(0xB), through: 20, on: topic) == 0)
        #expect(tracker.record(stream: stream, sequence: 9, on: topic) == .outOfOrder)
        #expect(tracker.record(stream: stream, sequence: 10, on: topic) == .inOrder)
        #expect(tracker.totals.missing == 5)
    }

    @Test func extremeSequenceNumbersDoNotOverflow() {
        var tracker = SequenceTracker<String>()
        tracker.record(stream: stream, sequence: 0, on: topic)
        #expect(tracker.record(stream: stream, sequence: .max, on: topic) == .gap(missed: .max - 1))
        #expect(tracker.record(stream: stream, sequence: .max, on: topic) == .duplicate)
        #expect(tracker.record(stream: stream, sequence: 5, on: topic) == .stale)
        #expect(tracker.reconcile(stream: stream, through: .max, on: topic) == 0)
    }

    /// Every k-th message of a flood is dropped (as a PUB socket over its high-water mark
    /// would): the tracker reports exactly those, by count and by sequence number.
    @Test(arguments: [2, 3, 7, 1000])
    func floodWithEveryKthMessageDroppedReportsExactlyTheDropped(k: Int) {
        let count: UInt64 = 100_000
        var tracker = SequenceTracker<String>(countsMissingStart: true)
        var reported: [UInt64] = []
        var dropped: [UInt64] = []
        for sequence in 0..<count {
            if sequence % UInt64(k) == 0 {
                dropped.append(sequence)
                continue
            }
            switch tracker.record(stream: stream, sequence: sequence, on: topic) {
            case .gap(let missed), .newStream(_, let missed):
                reported += Array(sequence - missed..<sequence)
            case .inOrder: break
            default: Issue.record("unexpected result for \(sequence)")
            }
        }
        let lastSequence = count - 1
        let tail = tracker.reconcile(stream: stream, through: lastSequence, on: topic)
        if tail > 0 { reported += Array(lastSequence + 1 - tail...lastSequence) }
        #expect(reported == dropped)
        #expect(tracker.totals.missing == UInt64(dropped.count))
        #expect(tracker.totals.delivered == count - UInt64(dropped.count))
        #expect(tracker.totals.duplicates == 0)
        #expect(tracker.totals.outOfOrder == 0)
    }

    @Test func floodWithLossesDuplicatesAndReorderingAddsUp() {
        // Deterministic chaos: drop 10%, duplicate 5%, swap neighbours 5%.
        var generator = SplitMix64(seed: 42)
        var arrivals: [UInt64] = []
        var droppedCount: UInt64 = 0
        var duplicatedCount: UInt64 = 0
        for sequence: UInt64 in 0..<50_000 {
            let roll = generator.next() % 100
            if roll < 10 {
                droppedCount += 1
                continue
            }
            arrivals.append(sequence)
            if roll < 15 {
                arrivals.append(sequence)
                duplicatedCount += 1
            }
        }
        var swapped: UInt64 = 0
        var index = 0
        while index + 1 < arrivals.count {
            if generator.next() % 100 < 5, arrivals[index] != arrivals[index + 1] {
                arrivals.swapAt(index, index + 1)
                swapped += 1
                index += 2
            } else {
                index += 1
            }
        }
        var tracker = SequenceTracker<String>(countsMissingStart: true)
        for sequence in arrivals { tracker.record(stream: stream, sequence: sequence, on: topic) }
        tracker.reconcile(stream: stream, through: 49_999, on: topic)
        #expect(tracker.totals.missing == droppedCount)
        #expect(tracker.totals.duplicates == duplicatedCount)
        #expect(tracker.totals.delivered == 50_000 - droppedCount)
        #expect(tracker.totals.outOfOrder > 0)
        #expect(tracker.totals.outOfOrder <= swapped)
    }

    @Test func totalsDescribeThemselves() {
        var totals = SequenceTotals()
        totals.missing = 3
        #expect(totals.description.contains("missing=3"))
    }
}

struct SequenceCounterTests {
    @Test func countsFromZeroPerTopic() {
        var counter = SequenceCounter<String>()
        #expect(counter.last(for: "a") == nil)
        #expect(counter.next(for: "a") == 0)
        #expect(counter.next(for: "a") == 1)
        #expect(counter.next(for: "b") == 0)
        #expect(counter.last(for: "a") == 1)
    }

    @Test func counterAndTrackerAgreeOnAnUnbrokenStream() {
        var counter = SequenceCounter<String>()
        var tracker = SequenceTracker<String>(countsMissingStart: true)
        let stream = StreamID.random()
        for _ in 0..<1000 {
            let result = tracker.record(stream: stream, sequence: counter.next(for: "t"), on: "t")
            #expect(result.isDelivered)
        }
        #expect(tracker.totals.delivered == 1000)
        #expect(tracker.totals.missing == 0)
    }
}
