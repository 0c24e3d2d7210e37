import KinesiaWire
import Testing

@testable import KinesiaCLI

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
        var records: [[PoseSegment]] = []
        var lost: [Range<UInt64>] = []
        var opened: [String] = []

        mutating func take(_ outputs: [Feed.Output]) {
            for output in outputs {
                switch output {
                case .analyse(let stream, let sequence, let pose, let opens):
                    #expect(pose == "\(stream):\(sequence)", "the pose analysed is the one numbered so")
                    analysed.append(pose)
                    if opens { opened.append(pose) }
                case .request(let request): requests.append(request)
                case .record(let segments): records.append(segments)
                case .lost(_, let sequences): lost.append(sequences)
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
        let first = feed.live(stream: stream, sequence: 7, pose: pose(stream, 7))
        guard case .record(let segments) = first.first else {
            Issue.record("the first output must be the record, got \(first)")
            return
        }
        #expect(segments == [PoseSegment(stream: stream, first: 7)])
        log.take(first)
        log.take(feed.live(stream: stream, sequence: 8, pose: pose(stream, 8)))
        #expect(log.analysed == names(stream, 7...8))
        #expect(log.requests.isEmpty)
    }

    @Test func aGapIsFilledThroughReplayBeforeTheAnalysisGoesOn() {
        var feed = Feed()
        var log = Log()
        for sequence: UInt64 in [0, 1, 4, 5] {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(
            log.analysed == names(stream, 0...1), "nothing after the hole is analysed before it is filled")
        #expect(log.requests == [PoseReplayRequest(stream: stream, from: 2, through: 3)])
        log.take(feed.replayed(stream: stream, sequence: 2, pose: pose(stream, 2)))
        log.take(feed.replayed(stream: stream, sequence: 3, pose: pose(stream, 3)))
        log.take(feed.live(stream: stream, sequence: 6, pose: pose(stream, 6)))
        #expect(log.analysed == names(stream, 0...6))
        #expect(feed.isCatchingUp == false)
    }

    @Test func duplicatesAndRepliesNotAskedForAreDropped() {
        var feed = Feed()
        var log = Log()
        for sequence: UInt64 in [0, 1, 1, 0, 2] {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.replayed(stream: stream, sequence: 3, pose: pose(stream, 3)))
        #expect(log.analysed == names(stream, 0...2))
        #expect(feed.duplicates == 2)
    }

    @Test func aResumedSessionReplaysFromItsStartThenJoinsTheLivePosesHeldMeanwhile() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 3)])
        var log = Log()
        log.take(feed.start())
        #expect(log.requests == [PoseReplayRequest(stream: stream, from: 3, through: nil)])
        // Subscribed first: live poses arrive while the replay runs, and are held.
        for sequence: UInt64 in 10...12 {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(log.analysed.isEmpty)
        // A batch of 4 (3...6), then its end says the server holds through 12.
        for sequence: UInt64 in 3...6 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.replayEnded(stream: stream, last: 12))
        #expect(log.requests.last == PoseReplayRequest(stream: stream, from: 7, through: 9))
        for sequence: UInt64 in 7...9 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(log.analysed == names(stream, 3...12), "the held live poses follow the replay, none twice")
        log.take(feed.replayEnded(stream: stream, last: 12))
        log.take(feed.live(stream: stream, sequence: 13, pose: pose(stream, 13)))
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
        log.take(feed.replayEnded(stream: stream, last: 4))
        #expect(feed.isCatchingUp == false)
        // The ingest comes back with the same stream id and goes on numbering.
        log.take(feed.live(stream: stream, sequence: 5, pose: pose(stream, 5)))
        #expect(log.analysed == names(stream, 0...5))
    }

    @Test func aResumedSessionReplaysEverySegmentAndMarksWhereEachNewStreamOpens() {
        var feed = Feed(segments: [
            PoseSegment(stream: stream, first: 2, last: 4), PoseSegment(stream: other, first: 0),
        ])
        var log = Log()
        log.take(feed.start())
        #expect(log.requests == [PoseReplayRequest(stream: stream, from: 2, through: 4)])
        for sequence: UInt64 in 2...4 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.replayEnded(stream: stream, last: 9))
        #expect(log.requests.last == PoseReplayRequest(stream: other, from: 0, through: nil))
        for sequence: UInt64 in 0...1 {
            log.take(feed.replayed(stream: other, sequence: sequence, pose: pose(other, sequence)))
        }
        log.take(feed.replayEnded(stream: other, last: 1))
        #expect(log.analysed == names(stream, 2...4) + names(other, 0...1))
        #expect(
            log.opened == [pose(other, 0)], "the sender-restart rule applies where the live run applied it")
    }

    @Test func aNewStreamIdClosesTheSegmentAtTheLastPoseAnalysedAndRecordsTheNextOne() {
        var feed = Feed()
        var log = Log()
        for sequence: UInt64 in 0...2 {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        log.take(feed.live(stream: other, sequence: 0, pose: pose(other, 0)))
        #expect(
            log.records.last == [
                PoseSegment(stream: stream, first: 0, last: 2), PoseSegment(stream: other, first: 0),
            ])
        #expect(log.opened == [pose(other, 0)])
        // The old sender's late poses are not analysed again.
        log.take(feed.live(stream: stream, sequence: 3, pose: pose(stream, 3)))
        #expect(log.analysed == names(stream, 0...2) + [pose(other, 0)])
    }

    @Test func posesNoLongerHeldAreReportedLostAndSkipped() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)])
        var log = Log()
        log.take(feed.start())
        log.take(feed.live(stream: stream, sequence: 20, pose: pose(stream, 20)))
        // Retention removed 0...9.
        log.take(feed.replayFailed(stream: stream, first: 10))
        #expect(log.lost == [0..<10])
        #expect(log.requests.last == PoseReplayRequest(stream: stream, from: 10, through: 19))
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
        log.take(feed.live(stream: stream, sequence: 5, pose: pose(stream, 5)))
        log.take(feed.replayFailed(stream: stream, first: nil))
        #expect(log.lost == [0..<5])
        #expect(log.analysed == [pose(stream, 5)])
        #expect(feed.isCatchingUp == false)
    }

    @Test func aReplyThatEndsShortOfTheHeldPosesIsAskedOnceMoreBeforeTheHoleIsLost() {
        var feed = Feed()
        var log = Log()
        log.take(feed.live(stream: stream, sequence: 0, pose: pose(stream, 0)))
        log.take(feed.live(stream: stream, sequence: 3, pose: pose(stream, 3)))
        // The server's answer predates pose 1 and 2: ask again.
        log.take(feed.replayEnded(stream: stream, last: 0))
        #expect(log.requests.count == 2)
        #expect(log.lost.isEmpty)
        log.take(feed.replayEnded(stream: stream, last: 0))
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
                == Array(repeating: PoseReplayRequest(stream: stream, from: 0, through: nil), count: 2))
    }

    @Test func livePosesBeyondTheHoldingLimitAreFetchedThroughReplayLater() {
        var feed = Feed(segments: [PoseSegment(stream: stream, first: 0)], maximumHeld: 2)
        var log = Log()
        log.take(feed.start())
        for sequence: UInt64 in 5...8 {
            log.take(feed.live(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(feed.deferred == 2)
        for sequence: UInt64 in 0...4 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        // 5 and 6 were held; 7 and 8 were not: the next live pose shows the hole.
        #expect(log.analysed == names(stream, 0...6))
        log.take(feed.live(stream: stream, sequence: 9, pose: pose(stream, 9)))
        #expect(log.requests.last == PoseReplayRequest(stream: stream, from: 7, through: 8))
        for sequence: UInt64 in 7...8 {
            log.take(feed.replayed(stream: stream, sequence: sequence, pose: pose(stream, sequence)))
        }
        #expect(log.analysed == names(stream, 0...9))
    }
}
