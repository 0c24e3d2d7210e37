import KinesiaAnalytics
import KinesiaMotion
import Testing

/// Hand-made squats with known tempo, range, symmetry, trend, faults and sets.
struct MotionAnalyticsTests {
    /// Every record of the script's poses, then those of `finish()`.
    static func records(_ script: SquatScript, rules: AnalyticsRules = AnalyticsRules()) -> [AnalyticsRecord]
    {
        var analytics = MotionAnalytics(exercise: .squat, rules: rules)
        var records: [AnalyticsRecord] = []
        for pose in script.poses { records += analytics.process(pose) }
        return records + analytics.finish()
    }

    static func tempos(_ records: [AnalyticsRecord], _ side: BodySide) -> [RepTempo] {
        records.compactMap { if case .repTempo(let t) = $0, t.side == side { t } else { nil } }
    }

    static func pairs(_ records: [AnalyticsRecord]) -> [RepSymmetry] {
        records.compactMap { if case .repSymmetry(let s) = $0 { s } else { nil } }
    }

    static func summaries(_ records: [AnalyticsRecord], _ side: BodySide) -> [SetSummary] {
        records.compactMap { if case .setSummary(let s) = $0, s.side == side { s } else { nil } }
    }

    @Test func aRepsTempoSplitsItsTimeUpAtTheTopAndDown() throws {
        var script = SquatScript()
        script.rest(1)
        script.rep(left: 90, right: 90, up: 1, top: 1, down: 1)
        let tempo = try #require(Self.tempos(Self.records(script), .left).first)
        // The ramps cross 30 (start) at a third of the way up, the top band (81) at 0.9 of it,
        // leave the band 0.1 of the way down and cross 20 (end) at 0.78 of it. The smoothing
        // delays both ends by about the same, so the phases keep their lengths.
        #expect(abs(tempo.timeUp - (0.9 - 1.0 / 3)) < 0.12, "\(tempo)")
        #expect(abs(tempo.timeAtTop - 1.2) < 0.12, "\(tempo)")
        #expect(abs(tempo.timeDown - (0.78 - 0.1)) < 0.12, "\(tempo)")
        #expect(abs(tempo.timeUp + tempo.timeAtTop + tempo.timeDown - tempo.timeUnderTension) < 1e-9)
        #expect(tempo.timeUnderTension == tempo.end - tempo.start)
        #expect(abs(tempo.peak - 90) < 1)
        #expect(abs(tempo.low - 0) < 1)
        #expect(abs(tempo.range - 90) < 1.5)
        #expect(tempo.peakTime >= tempo.start + tempo.timeUp && tempo.peakTime <= tempo.end - tempo.timeDown)
        #expect(tempo.number == 1 && tempo.set == 1 && tempo.isClean)
    }

    @Test func aSlowerDescentShowsInTimeDown() throws {
        var fast = SquatScript()
        fast.rest(1)
        fast.rep(left: 90, right: 90, down: 1)
        var slow = SquatScript()
        slow.rest(1)
        slow.rep(left: 90, right: 90, down: 3)
        let a = try #require(Self.tempos(Self.records(fast), .right).first)
        let b = try #require(Self.tempos(Self.records(slow), .right).first)
        #expect(abs((b.timeDown - a.timeDown) - 2 * 0.68) < 0.1, "\(a) \(b)")
        #expect(abs(b.timeUp - a.timeUp) < 0.05)
        // The band is left a tenth of the way down: 0.3 s into a 3 s descent, 0.1 s into 1 s.
        #expect(abs((b.timeAtTop - a.timeAtTop) - 0.2) < 0.1, "\(a) \(b)")
    }

    @Test func theRangeStartsAtTheRestBeforeTheRep() throws {
        var script = SquatScript()
        script.rest(1, at: 10)
        script.rep(left: 80, right: 80)
        let tempo = try #require(Self.tempos(Self.records(script), .left).first)
        // The rest at 10 arms the session (<= 20); the ramp starts at 0, so the low is near 0.
        #expect(tempo.low < 10.5)
        #expect(abs(tempo.range - (tempo.peak - tempo.low)) < 1e-12)
    }

    @Test func eachPairOfLeftAndRightRepsGivesTheirSymmetry() throws {
        var script = SquatScript()
        script.rest(1)
        for _ in 0..<3 { script.rep(left: 90, right: 70) }
        let records = Self.records(script)
        let pairs = Self.pairs(records)
        #expect(pairs.map(\.pair) == [1, 2, 3])
        #expect(pairs.map(\.left.number) == [1, 2, 3])
        #expect(pairs.map(\.right.number) == [1, 2, 3])
        for pair in pairs {
            #expect(abs(pair.peakDifference - 20) < 1, "\(pair)")
            let ratio = try #require(pair.rangeRatio)
            #expect(abs(ratio - 70.0 / 90) < 0.02, "\(pair)")
            #expect(try #require(pair.tempoRatio) <= 1)
        }
        // The pair comes right after the second rep of the pair: the left one here, whose 90°
        // comes back down to 20° later than the right side's 70°.
        let first = try #require(records.firstIndex { if case .repSymmetry = $0 { true } else { false } })
        guard case .repTempo(let before) = records[first - 1] else {
            Issue.record("no rep before the pair")
            return
        }
        #expect(before.side == .left)
    }

    @Test func theTrendOfThePeaksShowsFatigue() throws {
        var script = SquatScript()
        script.rest(1)
        for peak in [100.0, 95, 90, 85, 80] { script.rep(left: peak, right: peak) }
        let summary = try #require(Self.summaries(Self.records(script), .left).last)
        #expect(summary.isComplete)
        #expect(summary.reps == 5)
        let slope = try #require(summary.peakSlope)
        #expect(abs(slope - -5) < 0.3, "\(slope)")
        #expect(abs(summary.firstPeak - 100) < 1 && abs(summary.lastPeak - 80) < 1)
    }

    @Test func rejectedRepsAreSharedOutByFault() throws {
        var script = SquatScript()
        script.rest(1)
        script.rep(left: 90, right: 90)
        script.rep(left: 90, right: 90, lean: 60)
        script.rep(left: 90, right: 90)
        script.rep(left: 90, right: 90)
        let records = Self.records(script)
        let tempos = Self.tempos(records, .left)
        #expect(tempos.map(\.isClean) == [true, false, true, true])
        #expect(tempos[1].faults == [.keepTrunkUpright])
        let summary = try #require(Self.summaries(records, .left).last)
        #expect(summary.reps == 4 && summary.clean == 3 && summary.rejected == 1)
        #expect(summary.rejectedShare == 0.25)
        #expect(summary.rejectedByFault == [.keepTrunkUpright: 1])
        #expect(summary.rejectedShare(for: .keepTrunkUpright) == 0.25)
    }

    @Test func progressIsTheMeanCleanPeakAgainstTheBaseline() throws {
        var script = SquatScript()
        script.rest(1)
        // Baseline: the best of the first three clean reps (90); then two reps at 100.
        for peak in [80.0, 90, 85, 100, 100] { script.rep(left: peak, right: peak) }
        let summaries = Self.summaries(Self.records(script), .right)
        #expect(summaries.prefix(2).allSatisfy { $0.baseline == nil })
        let last = try #require(summaries.last)
        let baseline = try #require(last.baseline)
        #expect(abs(baseline - 90) < 1)
        let mean = try #require(last.meanCleanPeak)
        #expect(abs(mean - 91) < 1)
        #expect(abs(try #require(last.progress) - (mean - baseline)) < 1e-12)
        #expect(abs(try #require(last.progressPercent) - 100 * (mean - baseline) / baseline) < 1e-9)
    }

    @Test func aPauseEndsTheSetAndTheNextRepStartsAnother() throws {
        var script = SquatScript()
        script.rest(1)
        script.rep(left: 90, right: 90)
        script.rep(left: 90, right: 90)
        script.rest(25)
        script.rep(left: 90, right: 90)
        var analytics = MotionAnalytics(exercise: .squat)
        var records: [AnalyticsRecord] = []
        var closedAt: Double?
        for pose in script.poses {
            let found = analytics.process(pose)
            if closedAt == nil,
                found.contains(where: { if case .setSummary(let s) = $0 { s.isComplete } else { false } })
            {
                closedAt = pose.timestamp
            }
            records += found
        }
        // Closed at the first pose more than 20 s after the last rep ended, before the next rep.
        let lastRepOfSet1 = try #require(Self.tempos(records, .left).first { $0.number == 2 })
        let closed = try #require(closedAt)
        #expect(closed > lastRepOfSet1.end + 20 && closed < lastRepOfSet1.end + 20.1)
        let complete = Self.summaries(records, .left).filter(\.isComplete)
        #expect(complete.map(\.set) == [1])
        #expect(complete.first?.reps == 2)
        let third = try #require(Self.tempos(records, .left).last)
        #expect(third.number == 3 && third.set == 2)
        #expect(Self.pairs(records).last.map { ($0.set, $0.pair) } ?? (0, 0) == (2, 1))
        let final = analytics.finish()
        #expect(final.count == 2)
        #expect(
            Self.summaries(final, .left).first.map { ($0.set, $0.reps, $0.isComplete) } ?? (0, 0, false) == (
                2, 1, true
            ))
    }

    @Test func aSideWithoutItsPartnerLeavesThePairOpen() throws {
        var script = SquatScript()
        script.rest(1)
        // Only the left knee bends past the minimum peak on the second rep.
        script.rep(left: 90, right: 90)
        script.rep(left: 90, right: 10)
        let records = Self.records(script)
        #expect(Self.tempos(records, .left).count == 2)
        #expect(Self.tempos(records, .right).count == 1)
        #expect(Self.pairs(records).count == 1)
    }

    @Test func theSamePosesGiveTheSameRecords() {
        var script = SquatScript()
        script.rest(1)
        for peak in [90.0, 80, 95] { script.rep(left: peak, right: peak - 5, lean: peak == 80 ? 60 : 0) }
        let first = Self.records(script).map { AnalyticsJSON.encode($0, at: 0) }
        let second = Self.records(script).map { AnalyticsJSON.encode($0, at: 0) }
        #expect(!first.isEmpty)
        #expect(first == second)
    }

    @Test func aTimeBaseRestartKeepsTheSet() throws {
        var first = SquatScript()
        first.rest(1)
        first.rep(left: 90, right: 90)
        var analytics = MotionAnalytics(exercise: .squat)
        for pose in first.poses { _ = analytics.process(pose) }
        analytics.restartTimeBase()
        var records: [AnalyticsRecord] = []
        for pose in first.poses { records += analytics.process(pose) }
        let tempo = try #require(Self.tempos(records, .left).first)
        #expect(tempo.number == 2 && tempo.set == 1)
        #expect(Self.pairs(records).first?.pair == 2)
    }
}
