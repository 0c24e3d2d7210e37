import KinesiaClient
import KinesiaWire
import Testing

/// One stream's ordered delivery on its own: the decisions ``ExactlyOnceStateMachine`` makes
/// for each stream, with the time and the request numbers passed in.
@Suite struct OrderedDeliveryTests {
    private typealias Delivery = OrderedDelivery<String>
    private let endpoint = "ipc:///tmp/bus/replay/w1.sock"

    /// What came out, in order: `"7"` delivered, `"ask 5+2 #1"` asked (from, limit, id),
    /// `"lost 3..<5"`.
    private struct Log {
        var lines: [String] = []
        var numbers = Delivery.RequestNumbers()
        var actions: [Delivery.Action] = []

        mutating func run(_ body: (inout Delivery.RequestNumbers, inout [Delivery.Action]) -> Void) {
            actions.removeAll()
            body(&numbers, &actions)
            for action in actions {
                switch action {
                case .deliver(let sequence, let message):
                    #expect(message == "m\(sequence)", "the message delivered is the one numbered so")
                    lines.append("\(sequence)")
                case .request(_, let id, let from, let limit): lines.append("ask \(from)+\(limit) #\(id)")
                case .lost(let range): lines.append("lost \(range.lowerBound)..<\(range.upperBound)")
                }
            }
        }
    }

    private func receive(
        _ stream: inout Delivery, _ sequence: UInt64, live: Bool = true, at now: Duration = .zero,
        _ log: inout Log
    ) {
        log.run { numbers, actions in
            stream.received(
                sequence: sequence, message: "m\(sequence)", live: live, now: now, numbers: &numbers,
                into: &actions)
        }
    }

    private func end(
        _ id: UInt32, first: UInt64, last: UInt64, next: UInt64, count: UInt32
    ) -> ReplayBatchEnd {
        ReplayBatchEnd(requestID: id, stream: StreamID(1), first: first, last: last, next: next, count: count)
    }

    @Test func aHoleIsAskedForUpToTheFirstBufferedMessageAndFilledInOrder() {
        var stream = Delivery(next: 0)
        var log = Log()
        log.run { stream.announced(endpoint: endpoint, last: 0, now: .zero, numbers: &$0, into: &$1) }
        receive(&stream, 0, &log)
        receive(&stream, 3, &log)
        receive(&stream, 4, &log)
        #expect(log.lines == ["0", "ask 1+2 #1"])
        receive(&stream, 1, live: false, &log)
        receive(&stream, 2, live: false, &log)
        log.run {
            stream.replayEnded(
                end(1, first: 1, last: 4, next: 3, count: 2), now: .zero, numbers: &$0, into: &$1)
        }
        #expect(log.lines == ["0", "ask 1+2 #1", "1", "2", "3", "4"])
        #expect(stream.next == 5)
        #expect(stream.counters.named == ["replayed": 2, "requests": 1])
    }

    @Test func oneCounterNumbersTheRequestsOfEveryStream() {
        var a = Delivery(next: 0)
        var b = Delivery(next: 0)
        var log = Log()
        log.run { numbers, actions in
            a.announced(
                endpoint: endpoint, last: 5, followedNow: true, now: .zero, numbers: &numbers, into: &actions)
            b.announced(
                endpoint: endpoint, last: 5, followedNow: true, now: .zero, numbers: &numbers, into: &actions)
        }
        #expect(log.lines == ["ask 0+256 #1", "ask 0+256 #2"])
    }

    @Test func anUnansweredRequestIsSentAgainThenTheServerIsTakenForGoneAndTheHoleLostAfterATakeover() {
        var stream = Delivery(next: 0, policy: .init(requestTimeout: .seconds(3), maximumRetries: 2))
        var log = Log()
        log.run { stream.announced(endpoint: endpoint, last: 0, now: .zero, numbers: &$0, into: &$1) }
        receive(&stream, 2, &log)
        #expect(log.lines == ["ask 0+2 #1"])
        log.run { stream.tick(now: .milliseconds(2_999), numbers: &$0, into: &$1) }
        #expect(log.lines.count == 1, "not before the timeout")
        log.run { stream.tick(now: .seconds(3), numbers: &$0, into: &$1) }
        #expect(log.lines.last == "ask 0+2 #2")
        #expect(!stream.isPending(1) && stream.isPending(2))
        // The first answer comes late: it is no longer asked for, and ignored.
        receive(&stream, 0, live: false, at: .seconds(4), &log)
        log.run {
            stream.replayEnded(
                end(1, first: 0, last: 2, next: 1, count: 1), now: .seconds(4), numbers: &$0, into: &$1)
        }
        #expect(log.lines.last == "0", "a replayed message is delivered whichever request brought it")
        log.run { stream.tick(now: .seconds(6), numbers: &$0, into: &$1) }
        #expect(stream.counters.serverGone == 1, "taken for gone after two unanswered requests")
        // Exactly once: another server may announce the stream within a takeover's time (30 s).
        log.run { stream.tick(now: .milliseconds(35_999), numbers: &$0, into: &$1) }
        #expect(log.lines.last == "0")
        log.run { stream.tick(now: .seconds(36), numbers: &$0, into: &$1) }
        #expect(log.lines.suffix(2) == ["lost 1..<2", "2"], "nobody announced it: the hole is lost")
        #expect(stream.counters.serverGone == 1 && stream.counters.retries == 1 && stream.counters.lost == 1)
    }

    /// Live first: a consumer with a hole wait loses the hole of a server taken for gone at once.
    @Test func aLiveFirstStreamLosesTheHoleOfAServerTakenForGoneAtOnce() {
        var stream = Delivery(
            next: 0,
            policy: .init(requestTimeout: .seconds(3), maximumRetries: 2, holeWait: .seconds(60)))
        var log = Log()
        log.run { stream.announced(endpoint: endpoint, last: 0, now: .zero, numbers: &$0, into: &$1) }
        receive(&stream, 2, &log)
        log.run { stream.tick(now: .seconds(3), numbers: &$0, into: &$1) }
        log.run { stream.tick(now: .seconds(6), numbers: &$0, into: &$1) }
        #expect(log.lines.suffix(2) == ["lost 0..<2", "2"])
    }

    /// A server announced again and again that never answers is waited for a takeover's time
    /// from its first silence, not from each announcement: the stream does not stall for ever.
    @Test func aSilentServerAnnouncedAgainAndAgainIsGivenUpATakeoverAfterItsFirstSilence() {
        var stream = Delivery(
            next: 0,
            policy: .init(requestTimeout: .seconds(1), takeoverTimeout: .seconds(10), maximumRetries: 2))
        var log = Log()
        log.run { stream.announced(endpoint: endpoint, last: 0, now: .zero, numbers: &$0, into: &$1) }
        receive(&stream, 3, &log)
        var lostAt: Int?
        for second in 1...30 {
            log.run {
                stream.announced(endpoint: endpoint, last: 3, now: .seconds(second), numbers: &$0, into: &$1)
            }
            log.run { stream.tick(now: .seconds(second), numbers: &$0, into: &$1) }
            if lostAt == nil, log.lines.contains("lost 0..<3") { lostAt = second }
        }
        // Taken for gone at 2 s, then every 2 s after an announcement; given up at the first
        // silence from 12 s (10 s after the first).
        #expect(lostAt.map { (12...14).contains($0) } == true, "lost at \(String(describing: lostAt))")
        #expect(log.lines.contains("3"))
    }

    /// A pool worker paused with its sessions (their taker announces the streams from another
    /// endpoint) or a worker restarted elsewhere: the old server's silence is not counted
    /// against the new one. Found by the long chaos run with pools: a consumer lost holes the
    /// taker's journal held, its third unanswered request falling just after the taker's
    /// announcement.
    @Test func aHoleAskedOfASilentServerIsAskedOfTheStreamsNewServerAtOnceWithRetriesOfItsOwn() {
        let taker = "ipc:///tmp/bus/replay/pool2-cam0.left.sock"
        var stream = Delivery(next: 0, policy: .init(requestTimeout: .seconds(3), maximumRetries: 3))
        var log = Log()
        log.run { stream.announced(endpoint: endpoint, last: 0, now: .zero, numbers: &$0, into: &$1) }
        receive(&stream, 0, &log)
        receive(&stream, 3, at: .seconds(1), &log)
        log.run { stream.tick(now: .seconds(4), numbers: &$0, into: &$1) }
        log.run { stream.tick(now: .seconds(7), numbers: &$0, into: &$1) }
        #expect(log.lines == ["0", "ask 1+2 #1", "ask 1+2 #2", "ask 1+2 #3"], "the old server never answers")
        log.run { stream.announced(endpoint: taker, last: 3, now: .seconds(8), numbers: &$0, into: &$1) }
        #expect(log.lines.last == "ask 1+2 #4", "asked of the new server at once")
        #expect(!stream.isPending(3) && stream.isPending(4))
        guard case .request(let asked, _, _, _)? = log.actions.last else {
            Issue.record("no request")
            return
        }
        #expect(asked == taker)
        log.run { stream.tick(now: .seconds(10), numbers: &$0, into: &$1) }
        #expect(!log.lines.contains { $0.hasPrefix("lost") }, "the old server's silence is not the taker's")
        receive(&stream, 1, live: false, at: .seconds(10), &log)
        receive(&stream, 2, live: false, at: .seconds(10), &log)
        log.run {
            stream.replayEnded(
                end(4, first: 1, last: 3, next: 3, count: 2), now: .seconds(10), numbers: &$0, into: &$1)
        }
        #expect(log.lines.suffix(3) == ["1", "2", "3"])
        #expect(stream.counters.lost == 0 && stream.counters.serverGone == 0)
        // The same announcement again (its next heartbeat) changes nothing.
        log.run { stream.announced(endpoint: taker, last: 3, now: .seconds(11), numbers: &$0, into: &$1) }
        #expect(log.actions.isEmpty)
    }

    @Test func aHoleInAStreamNobodyServesIsLostAfterTheAnnouncementTimeout() {
        var stream = Delivery(next: 0, policy: .init(announcementTimeout: .seconds(5)))
        var log = Log()
        receive(&stream, 0, &log)
        receive(&stream, 4, at: .seconds(1), &log)
        log.run { stream.tick(now: .milliseconds(5_999), numbers: &$0, into: &$1) }
        #expect(log.lines == ["0"], "held, nothing to ask")
        log.run { stream.tick(now: .seconds(6), numbers: &$0, into: &$1) }
        #expect(log.lines == ["0", "lost 1..<4", "4"])
    }

    @Test func aMessageNumberedUInt64MaxEndsTheStream() {
        var stream = Delivery(next: .max - 1)
        var log = Log()
        receive(&stream, .max - 1, &log)
        receive(&stream, .max, &log)
        receive(&stream, .max, &log)
        #expect(log.lines == ["\(UInt64.max - 1)", "\(UInt64.max)"])
        #expect(stream.next == nil)
        #expect(stream.counters.duplicates == 1)
    }

    /// The server cuts a batch short (end included) when the client's queue is full; the end of
    /// the batch after it then comes while the cut one is still under way. The messages of the
    /// cut batch are asked for again, not reported lost (a slow consumer catching up with
    /// several batches in flight lost a whole batch this way).
    @Test func aBatchCutShortByTheServerIsAskedForAgainNotLost() {
        var stream = Delivery(next: 0)
        var log = Log()
        log.run {
            stream.announced(
                endpoint: endpoint, last: 999, followedNow: true, now: .zero, numbers: &$0, into: &$1)
        }
        for sequence: UInt64 in 0..<256 { receive(&stream, sequence, live: false, &log) }
        log.run {
            stream.replayEnded(
                end(1, first: 0, last: 999, next: 256, count: 256), now: .zero, numbers: &$0, into: &$1)
        }
        // The server's word taken: three batches in flight.
        #expect(log.lines.suffix(3) == ["ask 256+256 #2", "ask 512+256 #3", "ask 768+232 #4"])
        // Batch 2 is cut after 100 messages; batch 3 comes whole, with its end.
        for sequence: UInt64 in 256..<356 { receive(&stream, sequence, live: false, &log) }
        for sequence: UInt64 in 512..<768 { receive(&stream, sequence, live: false, &log) }
        log.run {
            stream.replayEnded(
                end(3, first: 512, last: 999, next: 768, count: 256), now: .zero, numbers: &$0, into: &$1)
        }
        #expect(!log.lines.contains { $0.hasPrefix("lost") }, "\(log.lines.filter { $0.hasPrefix("lost") })")
        #expect(log.lines.last == "ask 356+156 #5")
        #expect(stream.counters.cutBatches == 1)
        for sequence: UInt64 in 356..<512 { receive(&stream, sequence, live: false, &log) }
        #expect(stream.next == 768, "the cut batch's messages, then those held after them")
        #expect(log.lines.last == "ask 768+232 #6", "and on from there")
    }

    // MARK: Live first (a hole wait: the worker's pose feed)

    private var liveFirst: Delivery.Policy {
        Delivery.Policy(
            requestTimeout: .seconds(1), maximumInFlight: 1, holeWait: .milliseconds(500),
            asksAgainBeforeLosingHeld: true)
    }

    @Test func aHoleIsWaitedForAtMostTheHoleWaitFromTheArrivalOfTheMessageAfterIt() {
        var stream = Delivery(next: 0, policy: liveFirst, server: endpoint)
        var log = Log()
        receive(&stream, 0, &log)
        receive(&stream, 3, at: .milliseconds(100), &log)
        #expect(log.lines == ["0", "ask 1+2 #1"])
        #expect(stream.isWaiting)
        #expect(stream.deadline == .milliseconds(600), "500 ms after 3 arrived, before the request's timeout")
        log.run { stream.tick(now: .milliseconds(599), numbers: &$0, into: &$1) }
        #expect(log.lines.count == 2)
        // A second hole among the buffered messages: 6 arrived at 200 ms.
        receive(&stream, 6, at: .milliseconds(200), &log)
        log.run { stream.tick(now: .milliseconds(600), numbers: &$0, into: &$1) }
        #expect(log.lines == ["0", "ask 1+2 #1", "lost 1..<3", "3", "ask 4+2 #2"])
        #expect(stream.deadline == .milliseconds(700), "the next hole from the arrival of 6")
        log.run { stream.tick(now: .milliseconds(700), numbers: &$0, into: &$1) }
        #expect(log.lines.suffix(2) == ["lost 4..<6", "6"])
        #expect(stream.counters.holesGivenUp == 2)
        #expect(stream.isWaiting == false && stream.deadline == nil)
        // A late reply changes nothing.
        receive(&stream, 1, live: false, at: .seconds(1), &log)
        #expect(stream.counters.duplicates == 1)
    }

    @Test func withoutAHoleWaitAHoleWaitsForTheServer() {
        var stream = Delivery(next: 0, server: endpoint)
        var log = Log()
        receive(&stream, 0, &log)
        receive(&stream, 3, &log)
        log.run { stream.tick(now: .seconds(2), numbers: &$0, into: &$1) }
        #expect(log.lines == ["0", "ask 1+2 #1"], "an exactly-once consumer waits past any hole wait")
        #expect(stream.counters.holesGivenUp == 0)
    }

    @Test func aTailNotSentWithinTheHoleWaitIsLeftWhereItIs() {
        var stream = Delivery(next: 3, policy: liveFirst, server: endpoint)
        var log = Log()
        log.run {
            stream.announced(
                endpoint: endpoint, last: 6, followedNow: true, now: .seconds(1), numbers: &$0, into: &$1)
        }
        #expect(log.lines == ["ask 3+256 #1"])
        #expect(stream.deadline == .seconds(1) + .milliseconds(500))
        log.run { stream.tick(now: .seconds(1) + .milliseconds(500), numbers: &$0, into: &$1) }
        #expect(log.lines == ["ask 3+256 #1"], "nothing past the tail was delivered: nothing is lost")
        #expect(stream.next == 3 && stream.isWaiting == false && stream.deadline == nil)
        // The messages come live after all: delivered in order, nothing asked again.
        receive(&stream, 3, at: .seconds(2), &log)
        receive(&stream, 4, at: .seconds(2), &log)
        #expect(log.lines == ["ask 3+256 #1", "3", "4"])
    }

    @Test func aServerUnavailableGivesTheHoleUpAtOnceAndTheNextHoleIsAskedAgain() {
        var stream = Delivery(next: 0, policy: liveFirst, server: endpoint)
        var log = Log()
        receive(&stream, 0, &log)
        receive(&stream, 5, &log)
        log.run { stream.serverUnavailable(requestID: 1, now: .zero, numbers: &$0, into: &$1) }
        #expect(log.lines == ["0", "ask 1+4 #1", "lost 1..<5", "5"])
        receive(&stream, 8, &log)
        #expect(log.lines.last == "ask 6+2 #2", "a server may be back: asked, not given up in advance")
        #expect(stream.counters.serverGone == 1)
    }

    @Test func aReplyThatPredatesTheBufferedMessagesIsAskedOnceMoreBeforeTheHoleIsLost() {
        var stream = Delivery(next: 0, policy: liveFirst, server: endpoint)
        var log = Log()
        receive(&stream, 0, &log)
        receive(&stream, 3, &log)
        // The server holds only through 0 yet: its journal had not the poses when it answered.
        log.run {
            stream.replayEnded(
                end(1, first: 0, last: 0, next: 1, count: 0), now: .zero, numbers: &$0, into: &$1)
        }
        #expect(log.lines == ["0", "ask 1+2 #1", "ask 1+2 #2"])
        log.run {
            stream.replayEnded(
                end(2, first: 0, last: 0, next: 1, count: 0), now: .zero, numbers: &$0, into: &$1)
        }
        #expect(log.lines.suffix(2) == ["lost 1..<3", "3"])
    }
}
