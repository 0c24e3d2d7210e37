import KinesiaClient
import KinesiaWire
import Testing

/// The exactly-once decisions with no I/O: messages in, deliveries, requests and losses out.
struct ExactlyOnceStateMachineTests {
    typealias Machine = ExactlyOnceStateMachine<String>

    static let topic = try! Topic.event(camera: "cam0", session: "left")
    static let stream = StreamID(0x0123_4567_89AB_CDEF)
    static let key = ReplayStreamKey(topic: topic, stream: stream)
    static let endpoint = "ipc:///tmp/bus/replay/worker.sock"

    static func announcement(first: UInt64 = 0, last: UInt64) -> ReplayAnnouncement {
        ReplayAnnouncement(
            endpoint: endpoint,
            streams: [ReplayStreamInfo(topic: topic, stream: stream, first: first, last: last)])
    }

    /// The messages delivered by `actions`, as their sequence numbers.
    static func delivered(_ actions: [Machine.Action]) -> [UInt64] {
        actions.compactMap { if case .deliver(_, let sequence, _) = $0 { sequence } else { nil } }
    }

    static func requests(_ actions: [Machine.Action]) -> [ReplayRequest] {
        actions.compactMap { if case .request(_, let request) = $0 { request } else { nil } }
    }

    static func lost(_ actions: [Machine.Action]) -> [Range<UInt64>] {
        actions.compactMap { if case .lost(_, let range) = $0 { range } else { nil } }
    }

    static func live(_ machine: inout Machine, _ sequence: UInt64, at now: Duration = .zero) -> [Machine
        .Action]
    {
        machine.received(key, sequence: sequence, message: "#\(sequence)", live: true, now: now)
    }

    static func replay(
        _ machine: inout Machine, _ sequences: ClosedRange<UInt64>, for request: ReplayRequest, last: UInt64
    )
        -> [Machine.Action]
    {
        var actions: [Machine.Action] = []
        for sequence in sequences {
            actions += machine.received(
                key, sequence: sequence, message: "#\(sequence)", live: false, now: .zero)
        }
        actions += machine.replayEnded(
            ReplayBatchEnd(
                requestID: request.requestID, stream: stream, first: 0, last: last,
                next: sequences.upperBound + 1,
                count: UInt32(sequences.count)), now: .zero)
        return actions
    }

    @Test func inOrderLiveMessagesAreDeliveredAtOnceWithNoRequest() {
        var machine = Machine(start: .now)
        var all: [Machine.Action] = []
        for sequence in 5...9 { all += Self.live(&machine, UInt64(sequence)) }
        #expect(Self.delivered(all) == [5, 6, 7, 8, 9])
        #expect(Self.requests(all).isEmpty)
        #expect(machine.cursor.delivered[Self.key] == 9)
    }

    @Test func aLateJoinFromTheBeginningAsksForTheStartAndDeliversInOrder() throws {
        var machine = Machine(start: .beginning)
        // Sequence 600 arrives live before any heartbeat: buffered, nothing to ask yet.
        var actions = Self.live(&machine, 600)
        #expect(Self.delivered(actions).isEmpty)
        #expect(Self.requests(actions).isEmpty)
        actions = machine.announced(Self.announcement(last: 600), now: .zero)
        // The hole up to the buffered 600 is asked for at once, in three batches (the credit).
        let asked = Self.requests(actions)
        #expect(asked.map(\.from) == [0, 256, 512] && asked.map(\.limit) == [256, 256, 88])
        #expect(asked.allSatisfy { $0.stream == Self.stream })
        actions = Self.replay(&machine, 0...255, for: asked[0], last: 600)
        #expect(Self.delivered(actions) == Array(0...255))
        #expect(Self.requests(actions).isEmpty, "the rest is under way")
        actions = Self.replay(&machine, 256...511, for: asked[1], last: 600)
        actions = Self.replay(&machine, 512...599, for: asked[2], last: 600)
        #expect(Self.delivered(actions) == Array(512...600))
        #expect(Self.requests(actions).isEmpty)
        #expect(machine.cursor.delivered[Self.key] == 600)
    }

    @Test func duplicatesFromLiveAndReplayAreDroppedAndCounted() throws {
        var machine = Machine(start: .now)
        _ = Self.live(&machine, 0)
        // No endpoint yet: no request. Announce it.
        #expect(Self.requests(Self.live(&machine, 3)).isEmpty)
        let asked = machine.announced(Self.announcement(last: 3), now: .zero)
        let replayRequest = try #require(Self.requests(asked).first)
        #expect(replayRequest.from == 1 && replayRequest.limit == 2)
        var all = Self.replay(&machine, 1...3, for: replayRequest, last: 3)  // 3 twice: buffered and replayed
        all += Self.live(&machine, 2)  // late live copy
        all += Self.live(&machine, 4)
        #expect(Self.delivered(all) == [1, 2, 3, 4])
        #expect(machine.counters["duplicates"] == 2)
    }

    @Test func aQuietStreamsLostTailIsAskedForAfterTwoHeartbeats() throws {
        var machine = Machine(start: .now)
        _ = Self.live(&machine, 0)
        _ = Self.live(&machine, 1)
        // The publisher sent 2...4, all lost; then it went quiet.
        #expect(Self.requests(machine.announced(Self.announcement(last: 4), now: .seconds(1))).isEmpty)
        let request = try #require(
            Self.requests(machine.announced(Self.announcement(last: 4), now: .seconds(2))).first)
        #expect(request.from == 2)
        let actions = Self.replay(&machine, 2...4, for: request, last: 4)
        #expect(Self.delivered(actions) == [2, 3, 4])
    }

    @Test func sequencesNoLongerRetainedAreReportedLostAndDeliveryGoesOn() throws {
        var machine = Machine(start: .beginning)
        let request = try #require(
            Self.requests(machine.announced(Self.announcement(first: 100, last: 120), now: .zero)).first)
        #expect(request.from == 0)
        let failure = ReplayFailure(
            requestID: request.requestID, code: .notRetained, stream: Self.stream, first: 100, last: 120,
            message: "")
        let actions = machine.replayFailed(failure, now: .zero)
        #expect(Self.lost(actions) == [0..<100])
        let next = try #require(Self.requests(actions).first)
        #expect(next.from == 100)
        #expect(machine.counters["lost"] == 100)
    }

    /// A record damaged in the server's journal is never served: the batch goes past it. The
    /// consumer reports it lost once and goes on, instead of asking for it for ever.
    @Test func aSequenceTheServerSkippedIsReportedLostOnceInsteadOfAskedForAgain() throws {
        var machine = Machine(start: .beginning)
        let request = try #require(
            Self.requests(machine.announced(Self.announcement(last: 9), now: .zero)).first)
        var actions: [Machine.Action] = []
        for sequence in [0, 1, 2, 3, 4, 6, 7, 8, 9] as [UInt64] {  // 5 is damaged
            actions += machine.received(
                Self.key, sequence: sequence, message: "#\(sequence)", live: false, now: .zero)
        }
        actions += machine.replayEnded(
            ReplayBatchEnd(
                requestID: request.requestID, stream: Self.stream, first: 0, last: 9, next: 10, count: 9),
            now: .zero)
        #expect(Self.delivered(actions) == [0, 1, 2, 3, 4, 6, 7, 8, 9])
        #expect(Self.lost(actions) == [5..<6])
        #expect(Self.requests(actions).isEmpty)
        #expect(machine.counters["lost"] == 1)
        #expect(machine.cursor.delivered[Self.key] == 9)
    }

    /// Entries dropped for lack of room may be what the batch went past: nothing is declared
    /// lost then, the consumer asks again.
    @Test func aBatchWhoseEntriesDidNotFitIsAskedForAgainNotDeclaredLost() throws {
        var machine = Machine(start: .beginning, maximumBuffered: 2)
        let request = try #require(
            Self.requests(machine.announced(Self.announcement(last: 9), now: .zero)).first)
        var actions: [Machine.Action] = []
        // 0 is late; 1...9 arrive first and only two of them fit.
        for sequence in 1...9 as ClosedRange<UInt64> {
            actions += machine.received(
                Self.key, sequence: sequence, message: "#\(sequence)", live: false, now: .zero)
        }
        actions += machine.received(Self.key, sequence: 0, message: "#0", live: false, now: .zero)
        actions += machine.replayEnded(
            ReplayBatchEnd(
                requestID: request.requestID, stream: Self.stream, first: 0, last: 9, next: 10, count: 10),
            now: .zero)
        #expect(Self.delivered(actions) == [0, 1, 2])
        #expect(Self.lost(actions).isEmpty)
        let again = try #require(Self.requests(actions).first)
        #expect(again.from == 3)
    }

    @Test func anUnknownStreamSkipsTheHoleAndDeliversWhatWasBuffered() throws {
        var machine = Machine(start: .now)
        _ = Self.live(&machine, 0)
        _ = machine.announced(Self.announcement(last: 0), now: .zero)
        let actions = Self.live(&machine, 5)
        let request = try #require(Self.requests(actions).first)
        let failure = ReplayFailure(
            requestID: request.requestID, code: .unknownStream, stream: Self.stream, first: 0, last: 0,
            message: "")
        let after = machine.replayFailed(failure, now: .zero)
        #expect(Self.lost(after) == [1..<5])
        #expect(Self.delivered(after) == [5])
        // Not known to that server: the next hole is lost at once, without asking...
        #expect(Self.lost(Self.live(&machine, 7, at: .seconds(1))) == [6..<7])
        // ...until the stream is announced as served again (a taker, a restarted worker): the
        // next hole is asked for, and filled.
        _ = machine.announced(Self.announcement(last: 7), now: .seconds(2))
        let asked = try #require(Self.requests(Self.live(&machine, 9, at: .seconds(3))).first)
        #expect(asked.from == 8)
        #expect(Self.delivered(Self.replay(&machine, 8...8, for: asked, last: 9)) == [8, 9])
    }

    @Test func anUnansweredRequestIsSentAgainAfterTheTimeout() throws {
        var machine = Machine(start: .now, requestTimeout: .seconds(3))
        _ = Self.live(&machine, 0)
        _ = machine.announced(Self.announcement(last: 0), now: .zero)
        let first = try #require(Self.requests(Self.live(&machine, 2, at: .seconds(1))).first)
        #expect(Self.requests(machine.tick(now: .seconds(2))).isEmpty)
        let again = try #require(Self.requests(machine.tick(now: .seconds(4))).first)
        #expect(again.from == first.from && again.requestID != first.requestID)
        // The late answer to the first request is ignored; the second fills the hole.
        #expect(
            machine.replayEnded(
                ReplayBatchEnd(
                    requestID: first.requestID, stream: Self.stream, first: 0, last: 2, next: 2, count: 1),
                now: .seconds(4)
            ).isEmpty)
        let actions = Self.replay(&machine, 1...1, for: again, last: 2)
        #expect(Self.delivered(actions) == [1, 2])
        #expect(machine.counters["retries"] == 1)
    }

    /// A server that died with a hole under way: asked three times, then taken for gone; the
    /// hole waits a takeover's time for another announcement of the stream (a pool worker's
    /// taker), and nobody announcing it, is lost (counted, and live delivery goes on), instead
    /// of asked every second for ever.
    @Test func aServerThatStopsAnsweringIsGivenUpAfterTheRetriesAndATakeoversWait() throws {
        var machine = Machine(
            start: .now, requestTimeout: .seconds(1), takeoverTimeout: .seconds(10), maximumRetries: 3)
        _ = Self.live(&machine, 0)
        _ = machine.announced(Self.announcement(last: 0), now: .zero)
        var requests = Self.requests(Self.live(&machine, 5, at: .zero))
        var lost: [Range<UInt64>] = []
        var delivered: [UInt64] = []
        for second in 1...20 {
            let actions = machine.tick(now: .seconds(second))
            requests += Self.requests(actions)
            lost += Self.lost(actions)
            delivered += Self.delivered(actions)
            if second == 12 { #expect(lost.isEmpty, "taken for gone at 3 s, waited for until 13 s") }
        }
        #expect(requests.count == 3)
        #expect(lost == [1..<5])
        #expect(delivered == [5])
        #expect(machine.counters["serverGone"] == 1)
        #expect(Self.delivered(Self.live(&machine, 6, at: .seconds(21))) == [6])
    }

    @Test func aHoleFromAPublisherWithoutReplayIsReportedLostAfterTheAnnouncementTimeout() {
        var machine = Machine(start: .now, announcementTimeout: .seconds(3))
        _ = Self.live(&machine, 0, at: .zero)
        _ = Self.live(&machine, 4, at: .seconds(1))
        #expect(Self.lost(machine.tick(now: .seconds(2))).isEmpty)
        let actions = machine.tick(now: .seconds(5))
        #expect(Self.lost(actions) == [1..<4])
        #expect(Self.delivered(actions) == [4])
    }

    /// A consumer started as a pool session's worker stopped (its lease lapsed): it saw #4 live
    /// and never an announcement; the worker says the stream is moving. The hole waits for the
    /// taker (30 s from that word, not 5 s from the hole), whose announcement fills it.
    @Test func aHoleInAStreamSaidToBeMovingWaitsForTheTakersAnnouncement() throws {
        var machine = Machine(
            start: .beginning, announcementTimeout: .seconds(5), takeoverTimeout: .seconds(30))
        _ = Self.live(&machine, 4, at: .zero)
        machine.moving([MovingStream(topic: Self.topic, stream: Self.stream)], now: .seconds(1))
        #expect(Self.lost(machine.tick(now: .seconds(6))).isEmpty)
        #expect(Self.lost(machine.tick(now: .seconds(30))).isEmpty)
        // The taker announces the stream: the hole is asked of it, and filled.
        let request = try #require(
            Self.requests(machine.announced(Self.announcement(last: 4), now: .seconds(30))).first)
        #expect(request.from == 0)
        let actions = Self.replay(&machine, 0...3, for: request, last: 4)
        #expect(Self.delivered(actions) == [0, 1, 2, 3, 4])
        #expect(machine.counters["lost"] == nil)
    }

    /// A stream whose endpoint is known (the broker's replay port over CURVE): said to be moving,
    /// the broker answers `unknownStream` (it forgot the old server; the taker has not served
    /// it yet): the hole waits for the taker's announcement instead of being lost, and is
    /// asked of it then. Without the word, the same answer loses it at once.
    @Test func anUnknownStreamWhileItMovesWaitsForTheTaker() throws {
        func held(said: Bool) throws -> (Machine, ReplayRequest, [Range<UInt64>]) {
            var machine = Machine(start: .beginning, takeoverTimeout: .seconds(30))
            let first = try #require(
                Self.requests(machine.announced(Self.announcement(last: 3), now: .zero)).first)
            _ = Self.replay(&machine, 0...3, for: first, last: 3)
            let request = try #require(Self.requests(Self.live(&machine, 8, at: .seconds(1))).first)
            if said {
                machine.moving([MovingStream(topic: Self.topic, stream: Self.stream)], now: .seconds(1))
            }
            let failure = ReplayFailure(
                requestID: request.requestID, code: .unknownStream, stream: Self.stream, first: 0, last: 0,
                message: "no replay server holds it")
            let lost = Self.lost(machine.replayFailed(failure, now: .seconds(3)))
            return (machine, request, lost)
        }
        #expect(try held(said: false).2 == [4..<8])
        var (machine, _, lost) = try held(said: true)
        #expect(lost.isEmpty)
        #expect(Self.lost(machine.tick(now: .seconds(20))).isEmpty)
        let again = try #require(
            Self.requests(machine.announced(Self.announcement(last: 8), now: .seconds(21))).first)
        #expect(again.from == 4)
        #expect(Self.delivered(Self.replay(&machine, 4...7, for: again, last: 8)) == [4, 5, 6, 7, 8])
        #expect(machine.counters["lost"] == nil)
    }

    /// A known server that stops answering while its stream moves is not taken for a loss: the
    /// hole waits for the taker up to the takeover's bound, then is lost.
    @Test func aSilentServerOfAMovingStreamWaitsForTheTakerThenGivesUp() throws {
        var machine = Machine(start: .beginning, takeoverTimeout: .seconds(30))
        _ = Self.live(&machine, 4, at: .zero)
        _ = try #require(Self.requests(machine.announced(Self.announcement(last: 4), now: .zero)).first)
        machine.moving([MovingStream(topic: Self.topic, stream: Self.stream)], now: .seconds(1))
        var lost: [Range<UInt64>] = []
        for second in stride(from: 3, through: 30, by: 3) {
            lost += Self.lost(machine.tick(now: .seconds(second)))
        }
        #expect(machine.counters["serverGone"] == 1)
        #expect(lost.isEmpty, "three unanswered requests, and still waiting for the taker")
        #expect(Self.lost(machine.tick(now: .seconds(31))) == [0..<4])
    }

    /// The takeover's wait is bounded: no taker within it, the hole is lost; a word about
    /// another stream changes nothing.
    @Test func aStreamSaidToBeMovingThatNobodyTakesOverLosesItsHoleAfterTheTakeoverTimeout() {
        var machine = Machine(
            start: .beginning, announcementTimeout: .seconds(5), takeoverTimeout: .seconds(30))
        _ = Self.live(&machine, 4, at: .zero)
        let other = MovingStream(topic: Self.topic, stream: StreamID(0x99))
        machine.moving([other], now: .seconds(1))
        machine.moving([MovingStream(topic: Self.topic, stream: Self.stream)], now: .seconds(2))
        // Said again later: the wait still counts from the first word.
        machine.moving([MovingStream(topic: Self.topic, stream: Self.stream)], now: .seconds(20))
        #expect(Self.lost(machine.tick(now: .seconds(31))).isEmpty)
        let actions = machine.tick(now: .seconds(32))
        #expect(Self.lost(actions) == [0..<4])
        #expect(Self.delivered(actions) == [4])

        // A word about a stream that was never seen follows nothing.
        var fresh = Machine(start: .beginning)
        fresh.moving([other], now: .zero)
        #expect(fresh.positions.isEmpty)
    }

    @Test func aSecondHoleHeldByAStreamGoneQuietIsGivenUpAfterItsOwnWait() {
        // 0, then 2 and 4 held: two holes, and nothing more comes to start the second's wait.
        var machine = Machine(start: .now, announcementTimeout: .seconds(3))
        _ = Self.live(&machine, 0, at: .zero)
        _ = Self.live(&machine, 2, at: .seconds(1))
        _ = Self.live(&machine, 4, at: .seconds(1))
        let first = machine.tick(now: .seconds(4))
        #expect(Self.lost(first) == [1..<2])
        #expect(Self.delivered(first) == [2])
        #expect(Self.lost(machine.tick(now: .seconds(6))).isEmpty)
        let second = machine.tick(now: .seconds(7))
        #expect(Self.lost(second) == [3..<4])
        #expect(Self.delivered(second) == [4])
    }

    @Test func aCursorResumesAfterTheLastDeliveredAndAStartAtNowSkipsTheHistory() throws {
        let cursor = ReplayCursor(delivered: [Self.key: 41])
        var resumed = Machine(start: .now, cursor: cursor)
        let request = try #require(
            Self.requests(resumed.announced(Self.announcement(last: 50), now: .zero)).first)
        #expect(request.from == 42)

        var now = Machine(start: .now)
        #expect(Self.requests(now.announced(Self.announcement(last: 50), now: .zero)).isEmpty)
        #expect(Self.delivered(Self.live(&now, 51)) == [51])

        var fromSequence = Machine(start: .sequence(10))
        let fromTen = try #require(
            Self.requests(fromSequence.announced(Self.announcement(last: 50), now: .zero)).first)
        #expect(fromTen.from == 10)
    }

    @Test func theBufferIsBoundedAndWhatDoesNotFitIsFetchedLater() throws {
        var machine = Machine(start: .now, maximumBuffered: 4)
        _ = Self.live(&machine, 0)
        _ = machine.announced(Self.announcement(last: 0), now: .zero)
        var actions: [Machine.Action] = []
        for sequence in 2...10 { actions += Self.live(&machine, UInt64(sequence)) }
        #expect(machine.counters["deferred"] == 5)  // 2...5 buffered, 6...10 not
        let request = try #require(Self.requests(actions).first)
        #expect(request.from == 1 && request.limit == 1)
        actions = Self.replay(&machine, 1...1, for: request, last: 10)
        #expect(Self.delivered(actions) == [1, 2, 3, 4, 5])
        let rest = try #require(Self.requests(actions).first)
        #expect(rest.from == 6)
        actions = Self.replay(&machine, 6...10, for: rest, last: 10)
        #expect(Self.delivered(actions) == [6, 7, 8, 9, 10])
    }

    @Test func aCursorReadsBackWhatItWrites() throws {
        let other = ReplayStreamKey(topic: try .event(camera: "cam1", session: "right"), stream: StreamID(7))
        let cursor = ReplayCursor(delivered: [Self.key: 41, other: 0])
        #expect(
            cursor.description
                == "event/cam0/left/ 0123456789abcdef 41\nevent/cam1/right/ 0000000000000007 0\n")
        #expect(try ReplayCursor(parsing: cursor.description) == cursor)
        #expect(throws: ReplayCursorError(line: 2)) { try ReplayCursor(parsing: "\nevent/cam0/ x 1\n") }
    }

    // MARK: Values at the edges of their types (a peer can send any)

    /// Sequence 0, then 2^64-1 from a forger on a real stream: the hole is reported lost (with
    /// the width it has: no trap converting it to an Int), the forged message is delivered once,
    /// and nothing can follow it on that stream (no wrap to 0 delivering 0 again).
    @Test func aSequenceNumberOfUInt64MaxIsTotal() {
        var machine = Machine(start: .now)
        var actions = Self.live(&machine, 0)
        actions += Self.live(&machine, .max)
        actions += machine.tick(now: .seconds(10))
        #expect(Self.delivered(actions) == [0, .max])
        #expect(Self.lost(actions) == [1..<UInt64.max])
        #expect(machine.counters["lost"] == Int.max)
        let after = Self.live(&machine, 0) + Self.live(&machine, .max) + Self.live(&machine, 5)
        #expect(Self.delivered(after).isEmpty)
        #expect(machine.cursor.delivered[Self.key] == .max)
        // A cursor at UInt64.max resumes with nothing after it.
        var resumed = Machine(start: .beginning, cursor: machine.cursor)
        #expect(Self.delivered(Self.live(&resumed, .max)).isEmpty)
    }

    /// A batch end whose `next` is 2^63 or more, and one whose `last` is UInt64.max.
    @Test func aBatchEndFarAheadNeverTrapsAndNeverGoesPastWhatTheServerHolds() throws {
        var machine = Machine(start: .beginning)
        let request = try #require(
            Self.requests(machine.announced(Self.announcement(last: 10), now: .zero)).first)
        let actions = machine.replayEnded(
            ReplayBatchEnd(
                requestID: request.requestID, stream: Self.stream, first: 0, last: 10, next: 1 << 63, count: 0
            ),
            now: .zero)
        #expect(Self.lost(actions) == [0..<11], "never past what the server says it holds")
        #expect(machine.positions[Self.key] == 11)
        var other = Machine(start: .beginning)
        let asked = try #require(
            Self.requests(other.announced(Self.announcement(last: .max), now: .zero)).first)
        let ended = other.replayEnded(
            ReplayBatchEnd(
                requestID: asked.requestID, stream: Self.stream, first: .max, last: .max, next: .max, count: 0
            ),
            now: .zero)
        #expect(Self.lost(ended) == [0..<UInt64.max])
    }

    /// A forged heartbeat says a real stream's last is 10^12: the consumer asks once, the
    /// server's batch end says what it really holds, and that ends it (before, the consumer
    /// asked again at every batch end: 111,283 requests in 22 s, on after the forger stopped).
    @Test func aForgedAnnouncementFarAheadCausesNoStormOfRequests() throws {
        var machine = Machine(start: .now)
        _ = Self.live(&machine, 0)
        _ = Self.live(&machine, 1)
        var requests: [ReplayRequest] = []
        var pending: [ReplayRequest] = []
        for second in 1...10 {
            // The forger's heartbeats (twice a second), and the real one.
            for last: UInt64 in [1_000_000_000_000, 1_000_000_000_000, 1] {
                let asked = Self.requests(
                    machine.announced(Self.announcement(last: last), now: .seconds(second)))
                requests += asked
                pending += asked
            }
            // The server answers each request at once: it holds 0...1.
            while let request = pending.popLast(), requests.count < 1000 {
                let answered = machine.replayEnded(
                    ReplayBatchEnd(
                        requestID: request.requestID, stream: Self.stream, first: 0, last: 1,
                        next: 2, count: 0),
                    now: .seconds(second))
                requests += Self.requests(answered)
                pending += Self.requests(answered)
            }
        }
        #expect(
            requests.count <= 10, "at most one request per forged heartbeat, not a storm: \(requests.count)")
        #expect(Self.lost(machine.tick(now: .seconds(20))).isEmpty)
    }

    /// A long catch-up keeps three batches under way (credit-based): after the first batch end
    /// says how much the server holds, every batch end asks for the next one behind the two
    /// still coming, so the catch-up waits on the server's disk, not on round trips.
    @Test func aLongCatchUpKeepsThreeBatchesInFlight() throws {
        var machine = Machine(start: .beginning)
        var pending = Self.requests(machine.announced(Self.announcement(last: 9_999), now: .zero))
        #expect(pending.count == 1, "a heartbeat's word is taken for one request")
        var delivered: [UInt64] = []
        var inFlight: [Int] = []
        while !pending.isEmpty {
            let request = pending.removeFirst()
            let upper = min(request.from + UInt64(request.limit) - 1, 9_999)
            let actions = Self.replay(&machine, request.from...upper, for: request, last: 9_999)
            delivered += Self.delivered(actions)
            pending += Self.requests(actions)
            inFlight.append(pending.count)
        }
        #expect(delivered == Array(0...9_999))
        #expect(inFlight.dropLast(3).allSatisfy { $0 == 3 }, "\(inFlight)")
        #expect(machine.counters["requests"] == 40)
    }
}
