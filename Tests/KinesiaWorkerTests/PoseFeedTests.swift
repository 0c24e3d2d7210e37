import KinesiaWire
import Testing

@testable import KinesiaWorker

/// The order in which a worker analyses a camera's poses, across gaps, restarts and new
/// streams: every pose once, in sequence order.
@Suite struct PoseFeedTests {
    private typealias Feed = PoseFeed<String>
    private let stream = StreamID(0xA)
    private let other = StreamID(0xB)

    /// The poses analysed (as `"<stream>:<sequence>"`), the requests and the losses, in order.
    private struct Log {
        var analysed: [String] = []
        var requests: [PoseReplayRequest] = []
        /// The number of each request, in order.
        var ids: [UInt32] = []
        /// The number of the last request made.
        var lastID: UInt32 { ids.last ?? 0 }
        var records: [[PoseSegment]] = []
        var lost: [Range<UInt64>] = []
        var skipped: [Range<UInt64>] = []
        var unavailable: [String] = []
        var opened: [String] = []

        /// Poses `sequences` of `stream` received live at `now`, in order.
        mutating func live(
            _ sequences: ClosedRange<UInt64>, of stream: StreamID, into feed: inout Feed,
            now: Duration = .zero
        ) {
            for sequence in sequences {
                take(feed.live(stream: stream, sequence: sequence, pose: "\(stream):\(sequence)", now: now))
            }
        }

        mutating func take(_ outputs: [Feed.Output]) {
            for output in outputs {
                switch output {
                case .analyse(let stream, let sequence, let pose, let opens):
                    #expect(pose == "\(stream):\(sequence)", "the pose analysed is the one numbered so")
                    analysed.append(pose)
                    if opens { opened.append(pose) }
                case .request(let request, let id):
                    requests.append(request)
                    ids.append(id)
                case .record(let segments): records.append(segments)
                case .skip(_, let sequences): skipped.append(sequences)
                case .lost(_, let sequences): lost.append(sequences)
                case .unavailable(let stream, let from): unavailable.append("\(stream):\(from)")
                }
            }
        }
    }

    private func pose(_ stream: StreamID, _ sequence: UInt64) -> String { "\(stream):\(sequence)" }

    private func names(_ stream: StreamID, _ range: ClosedRange<UInt64>) -> [String] {
        range.map { pose(stream, $0) }
    }

    @Test func aNewSessionStartsAtItsFirstLivePoseAndRecordsItBeforeAnalysingIt() {
        var feed = Feed()
        var log = Log()
        #expect(feed.start().isEmpty)
        let first = feed.live(stream: stream, sequence: 7, pose: pose(stream, 7), now: .zero)
        guard case .record(let segments) = first.first else {
            Issue.record("the first output must be the record, got \(first)")
            return
        }
        #expect(segments == [PoseSegment(stream: stream, first: 7)])
        log.take(first)
        log.take(feed.live(stream: stream, sequence: 8, pose: pose(stream, 8), now: .zero))
        #expect(log.analysed == names(stream, 7...8))
        #expect(log.requests.isEmpty)
    }

    @Test func aGapIsFilledThroughReplayBeforeTheAnalysisGoesOn() {
        var feed = Feed()
        var log = Log()
        for sequence: UInt64 in [0, 1, 4, 5] {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence), now: .zero))
        }
        #expect(
            log.analysed == names(stream, 0...1), "nothing after the hole is analysed before it is filled")
        #expect(log.requests == [PoseReplayRequest(stream: stream, from: 2, through: 3)])
        log.take(feed.replayed(stream: stream, sequence: 2, pose: pose(stream, 2)))
        log.take(feed.replayed(stream: stream, sequence: 3, pose: pose(stream, 3)))
        log.take(feed.live(stream: stream, sequence: 6, pose: pose(stream, 6), now: .zero))
        #expect(log.analysed == names(stream, 0...6))
        #expect(feed.isCatchingUp == false)
    }

    @Test func duplicatesAndRepliesNotAskedForAreDropped() {
        var feed = Feed()
        var log = Log()
        for sequence: UInt64 in [0, 1, 1, 0, 2] {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence), now: .zero))
        }
        log.take(feed.replayed(stream: stream, sequence: 3, pose: pose(stream, 3)))
        #expect(log.analysed == names(stream, 0...2))
        #expect(feed.duplicates == 2)
    }

    @Test func aResumedSessionReplaysFromItsStartThenJoinsTheLivePosesHeldMeanwhile() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 3)])
        var log = Log()
        log.take(feed.start())
        #expect(
            log.requests == [PoseReplayRequest(stream: stream, from: 3, through: nil, waitsForServer: true)])
        // Subscribed first: live poses arrive while the replay runs, and are held.
        for sequence: UInt64 in 10...12 {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence), now: .zero))
        }
        #expect(log.analysed.isEmpty)
        // A batch of 4 (3...6), then its end says the server holds through 12.
        for sequence: UInt64 in 3...6 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.replayEnded(stream: stream, last: 12, id: log.lastID))
        #expect(
            log.requests.last == PoseReplayRequest(stream: stream, from: 7, through: 9, waitsForServer: true))
        for sequence: UInt64 in 7...9 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(log.analysed == names(stream, 3...12), "the held live poses follow the replay, none twice")
        log.take(feed.replayEnded(stream: stream, last: 12, id: log.lastID))
        log.take(feed.live(stream: stream, sequence: 13, pose: pose(stream, 13), now: .zero))
        #expect(log.analysed == names(stream, 3...13))
        #expect(log.records.isEmpty, "a resumed session's segments are already recorded")
    }

    @Test func aResumedSessionWhoseSenderIsGoneGoesLiveAtTheEndOfTheReplay() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)])
        var log = Log()
        log.take(feed.start())
        for sequence: UInt64 in 0...4 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.replayEnded(stream: stream, last: 4, id: log.lastID))
        #expect(feed.isCatchingUp == false)
        // The ingest comes back with the same stream id and goes on numbering.
        log.take(feed.live(stream: stream, sequence: 5, pose: pose(stream, 5), now: .zero))
        #expect(log.analysed == names(stream, 0...5))
    }

    @Test func aResumedSessionReplaysEverySegmentAndMarksWhereEachNewStreamOpens() {
        var feed = Feed(segments: [
            PoseSegment(stream: stream, first: 2, last: 4), PoseSegment(stream: other, first: 0),
        ])
        var log = Log()
        log.take(feed.start())
        #expect(
            log.requests == [PoseReplayRequest(stream: stream, from: 2, through: 4, waitsForServer: true)])
        for sequence: UInt64 in 2...4 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.replayEnded(stream: stream, last: 9, id: log.lastID))
        #expect(
            log.requests.last == PoseReplayRequest(stream: other, from: 0, through: nil, waitsForServer: true)
        )
        for sequence: UInt64 in 0...1 {
            log.take(feed.replayed(stream: other, sequence: sequence, pose: pose(other, sequence)))
        }
        log.take(feed.replayEnded(stream: other, last: 1, id: log.lastID))
        #expect(log.analysed == names(stream, 2...4) + names(other, 0...1))
        #expect(
            log.opened == [pose(other, 0)], "the sender-restart rule applies where the live run applied it")
    }

    @Test func aNewStreamIdClosesTheSegmentAtTheLastPoseAnalysedAndRecordsTheNextOne() {
        var feed = Feed()
        var log = Log()
        for sequence: UInt64 in 0...2 {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence), now: .zero))
        }
        log.take(feed.live(stream: other, sequence: 0, pose: pose(other, 0), now: .zero))
        #expect(
            log.records.last == [
                PoseSegment(stream: stream, first: 0, last: 2), PoseSegment(stream: other, first: 0),
            ])
        #expect(log.opened == [pose(other, 0)])
        // The old sender's late poses are not analysed again.
        log.take(feed.live(stream: stream, sequence: 3, pose: pose(stream, 3), now: .zero))
        #expect(log.analysed == names(stream, 0...2) + [pose(other, 0)])
    }

    @Test func posesNoLongerHeldAreReportedLostAndSkipped() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)])
        var log = Log()
        log.take(feed.start())
        log.take(feed.live(stream: stream, sequence: 20, pose: pose(stream, 20), now: .zero))
        // Retention removed 0...9.
        log.take(feed.replayFailed(stream: stream, first: 10, id: log.lastID))
        #expect(log.lost == [0..<10])
        #expect(
            log.requests.last
                == PoseReplayRequest(stream: stream, from: 10, through: 19, waitsForServer: true))
        for sequence: UInt64 in 10...19 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(log.analysed == names(stream, 10...20))
        #expect(feed.lost == 10)
    }

    @Test func aStreamNoServerKnowsIsSkippedToTheHeldPoses() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)])
        var log = Log()
        log.take(feed.start())
        log.take(feed.live(stream: stream, sequence: 5, pose: pose(stream, 5), now: .zero))
        log.take(feed.replayFailed(stream: stream, first: nil, id: log.lastID))
        #expect(log.lost == [0..<5])
        #expect(log.analysed == [pose(stream, 5)])
        #expect(feed.isCatchingUp == false)
    }

    @Test func aReplyThatEndsShortOfTheHeldPosesIsAskedOnceMoreBeforeTheHoleIsLost() {
        var feed = Feed()
        var log = Log()
        log.take(feed.live(stream: stream, sequence: 0, pose: pose(stream, 0), now: .zero))
        log.take(feed.live(stream: stream, sequence: 3, pose: pose(stream, 3), now: .zero))
        // The server's answer predates pose 1 and 2: ask again.
        log.take(feed.replayEnded(stream: stream, last: 0, id: log.lastID))
        #expect(log.requests.count == 2)
        #expect(log.lost.isEmpty)
        log.take(feed.replayEnded(stream: stream, last: 0, id: log.lastID))
        #expect(log.lost == [1..<3])
        #expect(log.analysed == [pose(stream, 0), pose(stream, 3)])
    }

    @Test func aRequestWithoutAnswerIsAskedAgain() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)])
        var log = Log()
        log.take(feed.start())
        log.take(feed.timedOut())
        #expect(
            log.requests
                == Array(
                    repeating: PoseReplayRequest(stream: stream, from: 0, through: nil, waitsForServer: true),
                    count: 2))
    }

    @Test func livePosesBeyondTheHoldingLimitAreFetchedThroughReplayLater() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)], maximumHeld: 2)
        var log = Log()
        log.take(feed.start())
        for sequence: UInt64 in 5...8 {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence), now: .zero))
        }
        #expect(feed.deferred == 2)
        for sequence: UInt64 in 0...4 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        // 5 and 6 were held; 7 and 8 were not: the next live pose shows the hole.
        #expect(log.analysed == names(stream, 0...6))
        log.take(feed.live(stream: stream, sequence: 9, pose: pose(stream, 9), now: .zero))
        #expect(log.requests.last == PoseReplayRequest(stream: stream, from: 7, through: 8))
        for sequence: UInt64 in 7...8 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(log.analysed == names(stream, 0...9))
    }

    // MARK: Live first

    @Test func aLiveHoleIsWaitedForAtMostTheHoleWaitThenGivenUpAndKept() {
        var feed = Feed(holeWait: .milliseconds(200))
        var log = Log()
        log.take(feed.live(stream: stream, sequence: 0, pose: pose(stream, 0), now: .zero))
        log.take(feed.live(stream: stream, sequence: 3, pose: pose(stream, 3), now: .milliseconds(10)))
        #expect(log.requests == [PoseReplayRequest(stream: stream, from: 1, through: 2)])
        #expect(feed.deadline == .milliseconds(210))
        log.take(feed.live(stream: stream, sequence: 4, pose: pose(stream, 4), now: .milliseconds(100)))
        log.take(feed.tick(now: .milliseconds(209)))
        #expect(log.analysed == [pose(stream, 0)], "the wait is not over")
        log.take(feed.tick(now: .milliseconds(210)))
        #expect(log.skipped == [1..<3], "the decision is kept before the poses after the hole are analysed")
        #expect(log.lost == [1..<3])
        #expect(log.analysed == [pose(stream, 0), pose(stream, 3), pose(stream, 4)])
        #expect(feed.segments == [PoseSegment(stream: stream, first: 0, skipped: [1..<3])])
        #expect(feed.holesSkipped == 1)
        #expect(feed.deadline == nil)
        // The late reply changes nothing.
        log.take(feed.replayed(stream: stream, sequence: 1, pose: pose(stream, 1)))
        log.take(feed.live(stream: stream, sequence: 5, pose: pose(stream, 5), now: .milliseconds(300)))
        #expect(log.analysed == [pose(stream, 0), pose(stream, 3), pose(stream, 4), pose(stream, 5)])
    }

    @Test func aHoleNobodyServesIsGivenUpAtOnce() {
        var feed = Feed()
        var log = Log()
        log.take(feed.live(stream: stream, sequence: 0, pose: pose(stream, 0), now: .zero))
        log.take(feed.live(stream: stream, sequence: 6, pose: pose(stream, 6), now: .zero))
        // The shell answers at once for a stream no server announces.
        log.take(feed.replayFailed(stream: stream, first: nil, id: log.lastID))
        #expect(log.analysed == [pose(stream, 0), pose(stream, 6)])
        #expect(log.skipped == [1..<6])
        #expect(feed.isCatchingUp == false)
    }

    @Test func aRebuildGivesUpTheHolesTheLiveRunGaveUpWithoutAskingForThem() {
        // Live: holes at 2...3 and 7 given up.
        var live = Feed()
        var liveLog = Log()
        for sequence: UInt64 in [0, 1, 4, 5, 6, 8, 9] {
            liveLog.take(
                live.live(stream: stream, sequence: sequence, pose: pose(stream, sequence), now: .zero))
            liveLog.take(live.replayFailed(stream: stream, first: nil, id: liveLog.lastID))
        }
        #expect(live.segments == [PoseSegment(stream: stream, first: 0, skipped: [2..<4, 7..<8])])
        // Rebuilt from the kept segments against a server that has every pose now.
        var rebuilt = Feed(segments: live.segments)
        var log = Log()
        log.take(rebuilt.start())
        while let request = log.requests.popLast() {
            let asked = request.from...min(request.through ?? 9, 9)
            #expect(!asked.contains { (2..<4).contains($0) || $0 == 7 }, "a skipped pose is never asked for")
            var sequence = request.from
            while sequence <= min(request.through ?? 9, 9) {
                log.take(rebuilt.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
                sequence += 1
            }
            log.take(rebuilt.replayEnded(stream: stream, last: 9, id: log.lastID))
        }
        #expect(log.analysed == liveLog.analysed, "the rebuild analyses exactly what the live run analysed")
        #expect(log.lost.isEmpty)
    }

    @Test func aRebuildWhoseServerStopsAnsweringGivesUpAfterTheRetries() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)], maximumRetries: 3)
        var log = Log()
        log.take(feed.start())
        log.take(feed.live(stream: stream, sequence: 40, pose: pose(stream, 40), now: .zero))
        log.take(feed.timedOut())
        log.take(feed.timedOut())
        #expect(log.requests.count == 3)
        log.take(feed.timedOut())
        #expect(log.requests.count == 3, "no fourth request to a server that is gone")
        #expect(log.lost == [0..<40])
        #expect(log.analysed == [pose(stream, 40)])
        #expect(feed.isCatchingUp == false)
    }

    @Test func sequenceNumbersAtTheEdgesOfTheirTypeNeverTrap() {
        var feed = Feed()
        var log = Log()
        log.take(feed.live(stream: stream, sequence: 0, pose: pose(stream, 0), now: .zero))
        log.take(feed.live(stream: stream, sequence: .max, pose: pose(stream, .max), now: .zero))
        // A batch of as many as a server sends: "as far as it holds" (256 poses on the wire).
        #expect(log.requests == [PoseReplayRequest(stream: stream, from: 1, through: nil)])
        log.take(feed.replayFailed(stream: stream, first: nil, id: log.lastID))
        #expect(log.lost == [1..<UInt64.max])
        #expect(feed.lost == UInt64.max - 1)
        // Nothing can follow UInt64.max on its stream: a second one is a duplicate.
        log.take(feed.live(stream: stream, sequence: .max, pose: pose(stream, .max), now: .zero))
        #expect(log.analysed == [pose(stream, 0), pose(stream, .max)])
        #expect(feed.duplicates == 1)
        // A new stream starts cleanly after it.
        log.take(feed.live(stream: other, sequence: .max - 1, pose: pose(other, .max - 1), now: .zero))
        log.take(feed.live(stream: other, sequence: .max, pose: pose(other, .max), now: .zero))
        #expect(log.analysed.suffix(2) == [pose(other, .max - 1), pose(other, .max)])
        var resumed = Feed(segments: [PoseSegment(stream: stream, first: .max - 1, last: .max)])
        log.take(resumed.start())
        log.take(resumed.replayFailed(stream: stream, first: .max, id: log.lastID))
        #expect(log.lost.last == (UInt64.max - 1)..<UInt64.max)
    }

    /// A stream whose first pose is numbered UInt64.max, then another stream, then the first
    /// again: the first stream's segment is kept closed at UInt64.max, so its later poses are
    /// an old sender's and never analysed (found by scripts/fuzz: before, the segment was taken
    /// for empty and dropped, and the old stream was analysed again as new).
    @Test func aStreamThatEndedAtUInt64MaxStaysClosed() {
        var feed = Feed()
        var log = Log()
        log.take(feed.live(stream: stream, sequence: .max, pose: pose(stream, .max), now: .zero))
        log.take(feed.live(stream: other, sequence: 0, pose: pose(other, 0), now: .zero))
        log.take(feed.live(stream: stream, sequence: 1 << 53, pose: pose(stream, 1 << 53), now: .zero))
        #expect(log.analysed == [pose(stream, .max), pose(other, 0)])
        #expect(feed.segments.first == PoseSegment(stream: stream, first: .max, last: .max))
    }

    // MARK: A tail announced but not received

    @Test func aTailAnnouncedTwiceButNeverReceivedIsAskedForAndAnalysed() {
        var feed = Feed()
        var log = Log()
        log.live(0...4, of: stream, into: &feed)
        // Poses 5...7 were published while the broker was down; the source then ended.
        log.take(feed.announced(stream: stream, last: 7, now: .seconds(1)))
        #expect(log.requests.isEmpty, "one announcement may still be ahead of poses in flight")
        log.take(feed.announced(stream: stream, last: 7, now: .seconds(1) + .milliseconds(100)))
        #expect(log.requests.isEmpty, "a second one sooner than the grace does not ask either")
        log.take(feed.announced(stream: stream, last: 7, now: .seconds(2)))
        #expect(log.requests == [PoseReplayRequest(stream: stream, from: 5, through: nil)])
        #expect(feed.isCatchingUp)
        #expect(feed.deadline == .seconds(2) + Feed.defaultHoleWait, "the tail is waited for as a hole")
        for sequence: UInt64 in 5...7 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.replayEnded(stream: stream, last: 7, id: log.lastID))
        #expect(log.analysed == names(stream, 0...7))
        #expect(feed.isCatchingUp == false)
        #expect(feed.deadline == nil)
        #expect(feed.tailsRequested == 1)
        #expect(log.lost.isEmpty && log.skipped.isEmpty)
        // Caught up: the same announcement again asks for nothing.
        log.take(feed.announced(stream: stream, last: 7, now: .seconds(3)))
        log.take(feed.announced(stream: stream, last: 7, now: .seconds(4)))
        #expect(log.requests.count == 1)
    }

    @Test func aTailThatArrivesLiveAfterTheFirstAnnouncementIsNotAskedFor() {
        var feed = Feed()
        var log = Log()
        log.live(0...4, of: stream, into: &feed)
        log.take(feed.announced(stream: stream, last: 5, now: .seconds(1)))
        log.take(feed.live(stream: stream, sequence: 5, pose: pose(stream, 5), now: .seconds(1)))
        log.take(feed.announced(stream: stream, last: 9, now: .seconds(2)))
        #expect(log.requests.isEmpty, "pose 5 came; 6...9 were announced only once")
        log.live(6...9, of: stream, into: &feed, now: .seconds(2))
        log.take(feed.announced(stream: stream, last: 9, now: .seconds(3)))
        #expect(log.requests.isEmpty)
        #expect(log.analysed == names(stream, 0...9))
        #expect(feed.tailsRequested == 0)
    }

    @Test func aTailNoServerFillsLeavesTheFeedLiveWhereItWasWithNothingSkipped() {
        var feed = Feed()
        var log = Log()
        log.live(0...2, of: stream, into: &feed)
        log.take(feed.announced(stream: stream, last: 6, now: .seconds(1)))
        log.take(feed.announced(stream: stream, last: 6, now: .seconds(2)))
        #expect(log.requests.count == 1)
        log.take(feed.tick(now: .seconds(2) + Feed.defaultHoleWait))
        #expect(feed.isCatchingUp == false, "given up after the hole wait: live again")
        #expect(log.skipped.isEmpty, "nothing after the tail was analysed: no hole to keep")
        #expect(feed.position?.next == 3)
        // The poses come live after all (a publisher that was paused): analysed in order.
        log.live(3...6, of: stream, into: &feed, now: .seconds(3))
        #expect(log.analysed == names(stream, 0...6))
    }

    @Test func anAnnouncementOfAnotherStreamOrWhileCatchingUpAsksForNothing() {
        var feed = Feed()
        var log = Log()
        for sequence: UInt64 in [0, 1, 3] {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence), now: .zero))
        }
        #expect(log.requests.count == 1, "the hole before 3")
        log.take(feed.announced(stream: stream, last: 9, now: .seconds(1)))
        log.take(feed.announced(stream: stream, last: 9, now: .seconds(2)))
        log.take(feed.announced(stream: other, last: 9, now: .seconds(1)))
        log.take(feed.announced(stream: other, last: 9, now: .seconds(2)))
        #expect(log.requests.count == 1, "a hole already asked for, and a stream the feed does not follow")
        #expect(feed.tailsRequested == 0)
    }

    @Test func withNoHoleWaitATailIsGivenUpAtOnce() {
        var feed = Feed(holeWait: .zero)
        var log = Log()
        log.take(feed.live(stream: stream, sequence: 0, pose: pose(stream, 0), now: .zero))
        log.take(feed.announced(stream: stream, last: 4, now: .seconds(1)))
        log.take(feed.announced(stream: stream, last: 4, now: .seconds(2)))
        #expect(log.requests.isEmpty)
        #expect(feed.isCatchingUp == false)
        #expect(feed.position?.next == 1)
    }

    /// A run begun before its camera published begins at the first pose of the camera's
    /// stream, not at the first received live: the poses before it are replayed first, and the
    /// segment is recorded at the first pose analysed, before it.
    @Test func aRunBegunBeforeItsCameraPublishedBeginsAtTheStreamsFirstPose() {
        var feed = Feed(beginsAtStreamStart: true)
        var log = Log()
        #expect(feed.start().isEmpty)
        log.live(75...76, of: stream, into: &feed)
        #expect(log.analysed.isEmpty && log.records.isEmpty, "nothing is the run's before its first pose")
        #expect(
            log.requests == [PoseReplayRequest(stream: stream, from: 0, through: 74, waitsForServer: true)])
        #expect(feed.isCatchingUp)
        let first = feed.replayed(stream: stream, sequence: 0, pose: pose(stream, 0))
        guard case .record(let segments) = first.first else {
            Issue.record("the first output must be the record, got \(first)")
            return
        }
        #expect(segments == [PoseSegment(stream: stream, first: 0)])
        log.take(first)
        for sequence: UInt64 in 1...74 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.live(77...77, of: stream, into: &feed)
        #expect(log.analysed == names(stream, 0...77), "the replay, then the held live poses, none twice")
        #expect(log.records.count == 1 && log.lost.isEmpty)
        #expect(feed.isCatchingUp == false)
    }

    /// A server that no longer holds the stream's first poses: the run begins at the first it
    /// holds, and the poses before it are not the run's (not lost).
    @Test func aRunBegunBeforeItsCameraPublishedBeginsAtTheFirstPoseTheServerHolds() {
        var feed = Feed(beginsAtStreamStart: true)
        var log = Log()
        log.live(75...75, of: stream, into: &feed)
        log.take(feed.replayFailed(stream: stream, first: 40, id: log.lastID))
        #expect(log.lost.isEmpty && log.records.isEmpty)
        #expect(
            log.requests.last
                == PoseReplayRequest(stream: stream, from: 40, through: 74, waitsForServer: true))
        for sequence: UInt64 in 40...74 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(log.records == [[PoseSegment(stream: stream, first: 40)]])
        #expect(log.analysed == names(stream, 40...75))
    }

    /// With no server for the stream, the run begins at the pose held, as a new session's; a
    /// first live pose numbered 0 is the stream's first, with nothing to replay.
    @Test func aRunBegunBeforeItsCameraPublishedWithNoServerBeginsAtItsFirstLivePose() {
        var feed = Feed(beginsAtStreamStart: true)
        var log = Log()
        log.live(75...75, of: stream, into: &feed)
        log.take(feed.replayFailed(stream: stream, first: nil, id: log.lastID))
        #expect(log.records == [[PoseSegment(stream: stream, first: 75)]])
        #expect(log.analysed == [pose(stream, 75)])
        #expect(log.lost.isEmpty && log.unavailable.isEmpty)

        var fromZero = Feed(beginsAtStreamStart: true)
        var started = Log()
        started.live(0...1, of: stream, into: &fromZero)
        #expect(started.requests.isEmpty && started.analysed == names(stream, 0...1))
        #expect(started.records == [[PoseSegment(stream: stream, first: 0)]])

        // A resumed session (segments recorded) begins where they say.
        let resumed = Feed(segments: [PoseSegment(stream: stream, first: 9)], beginsAtStreamStart: true)
        #expect(resumed.beginsAtStreamStart == false)
    }
}

extension PoseFeed {
    /// ``start(now:)`` at time zero.
    fileprivate mutating func start() -> [Output] { start(now: .zero) }

    /// ``replayed(stream:sequence:pose:now:)`` at time zero.
    fileprivate mutating func replayed(stream: StreamID, sequence: UInt64, pose: Pose) -> [Output] {
        replayed(stream: stream, sequence: sequence, pose: pose, now: .zero)
    }

    /// ``timedOut(now:)`` at time zero.
    fileprivate mutating func timedOut() -> [Output] { timedOut(now: .zero) }

    /// The end of the reply to request `id`: the server holds `stream` through `last` and sent
    /// what it had of the request.
    fileprivate mutating func replayEnded(stream: StreamID, last: UInt64, id: UInt32) -> [Output] {
        replayEnded(
            ReplayBatchEnd(
                requestID: id, stream: stream, first: 0, last: last, next: last == .max ? .max : last + 1,
                count: 0),
            now: .zero)
    }

    /// ``replayFailed(requestID:stream:first:now:)`` at time zero.
    fileprivate mutating func replayFailed(stream: StreamID, first: UInt64?, id: UInt32) -> [Output] {
        replayFailed(requestID: id, stream: stream, first: first, now: .zero)
    }
}
