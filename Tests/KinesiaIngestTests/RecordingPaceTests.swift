import Testing

@testable import KinesiaIngest

/// `--pace recording` as a value (issue 9, item 8): poses due at the pace of their timestamps;
/// a jump of the recording's time is not waited for.
struct RecordingPaceTests {
    private func at(_ seconds: Double) -> Duration {
        .seconds(1000) + .nanoseconds(Int64(seconds * 1e9))
    }

    @Test func posesAreDueAtThePaceOfTheirTimestampsDividedByTheSpeed() {
        var pace = RecordingPace(speed: 2)
        #expect(pace.schedule(10, now: at(0)) == .at(at(0)))
        #expect(pace.schedule(11, now: at(0.1)) == .at(at(0.5)))
        // Late: due in the past, so sent at once; the pace stays anchored.
        #expect(pace.schedule(12, now: at(3)) == .at(at(1)))
        #expect(pace.schedule(12, now: at(3)) == .at(at(1)))  // a repeated time waits nothing
        #expect(pace.schedule(.nan, now: at(3)) == .at(at(3)))
        #expect(pace.schedule(13, now: at(3)) == .at(at(1.5)))
    }

    @Test func aJumpAheadIsNotWaitedForAndThePaceGoesOnFromIt() {
        // Times in quarters of a second: exact in binary, so the instants compare exactly.
        var pace = RecordingPace(speed: 1)
        #expect(pace.schedule(0, now: at(0)) == .at(at(0)))
        #expect(pace.schedule(0.25, now: at(0.25)) == .at(at(0.25)))
        // 0.25 -> 10^6: 11.6 days at this speed.
        #expect(pace.schedule(1e6, now: at(0.25)) == .jump(from: 0.25, to: 1e6))
        #expect(pace.schedule(1e6 + 0.5, now: at(0.5)) == .at(at(0.75)))
        // A wait of exactly the longest is kept; a little more is a jump.
        #expect(pace.schedule(1e6 + 5.5, now: at(0.75)) == .at(at(5.75)))
        #expect(pace.schedule(1e6 + 10.75, now: at(5.75)) == .jump(from: 1e6 + 5.5, to: 1e6 + 10.75))
    }

    @Test func timeGoingBackIsAJumpTooNotABurst() {
        var pace = RecordingPace(speed: 1)
        _ = pace.schedule(100, now: at(0))
        _ = pace.schedule(101, now: at(1))
        // A recording joined to itself starts again at 0: paced from there, not all at once.
        #expect(pace.schedule(0, now: at(1)) == .jump(from: 101, to: 0))
        #expect(pace.schedule(1, now: at(1)) == .at(at(2)))
        #expect(pace.schedule(2, now: at(2)) == .at(at(3)))
    }

    @Test func theSpeedScalesTheLongestWait() {
        // 40 s of recording at 10x is a 4 s wait: kept.
        var fast = RecordingPace(speed: 10)
        _ = fast.schedule(0, now: at(0))
        #expect(fast.schedule(40, now: at(0)) == .at(at(4)))
        var slow = RecordingPace(speed: 1)
        _ = slow.schedule(0, now: at(0))
        #expect(slow.schedule(40, now: at(0)) == .jump(from: 0, to: 40))
    }

    @Test func theWarningSaysHowLongTheSkippedWaitWas() {
        #expect(
            IngestService.jumpMessage(from: 0, to: 1e6, speed: 1)
                == "the recording's time jumps from t=0.0 to t=1000000.0: a wait of 11.6 days (over 5 s) "
                + "skipped, the pace goes on from there")
        #expect(IngestService.jumpMessage(from: 0, to: 7200, speed: 1).contains("a wait of 2.0 h"))
        #expect(IngestService.jumpMessage(from: 0, to: 60, speed: 2).contains("a wait of 30.0 s"))
        #expect(
            IngestService.jumpMessage(from: 5, to: 1, speed: 1)
                == "the recording's time goes back from t=5.0 to t=1.0: sent at once, the pace goes on from there"
        )
    }
}
