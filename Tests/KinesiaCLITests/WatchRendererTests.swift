import KinesiaCLI
import KinesiaMotion
import KinesiaWire
import Testing

struct WatchRendererTests {
    let left = WatchState.SessionID(camera: "cam0", session: "left")

    /// A state with one session mid-set (holding, a joint missing, a setup issue, a rejected
    /// rep and a live fault) and two processes.
    func busyState() -> WatchState {
        var fixtures = WatchFixtures()
        var state = WatchState()
        var snapshot = WatchFixtures.midSet
        snapshot.holdProgress = 0.5
        snapshot.isVisible = false
        snapshot.missingJoints = [.leftElbow, .leftWrist]
        snapshot.setupIssues = [.tooFar, .lowConfidence]
        state.apply(fixtures.event(.formFault(.keepElbowStraight), at: 10.9), at: 0.5)
        state.apply(
            fixtures.event(
                .repRejected(Rep(peak: 138.4, faults: [.keepElbowStraight], start: 9, end: 11.2)), at: 11.2),
            at: 0.6)
        state.apply(fixtures.snapshot(snapshot, at: 12.4), at: 1)
        state.apply(
            fixtures.health("broker", role: "broker", pid: 4242, uptime: 12, counters: ["published": 3012]),
            at: 1)
        state.apply(
            fixtures.health(
                "worker-cam0-left", role: "worker", pid: 4250, uptime: 11,
                counters: ["gaps": 0, "poses": 1200, "events": 14]), at: 1)
        return state
    }

    @Test func theViewShowsEveryMeasureOfTheHud() {
        let lines = WatchRenderer.render(busyState(), now: 2, width: 100)
        #expect(lines[0] == "kinesia watch | 1 session | 2 processes | 5 messages | 0 missed | 0 invalid")
        #expect(lines.contains { $0.hasPrefix("cam0/left") && $0.hasSuffix("t 12.4 s") })
        #expect(lines.contains("  value     87°     best 142°    reps 3 clean, 1 rejected"))
        #expect(lines.contains { $0.hasPrefix("  hold      [") && $0.hasSuffix("]  50%") })
        #expect(lines.contains("  joints    missing leftElbow, leftWrist"))
        #expect(lines.contains("  quality   confidence 0.82   setup lowConfidence, tooFar"))
        #expect(lines.contains("  last      repRejected 138° keepElbowStraight (t 11.2 s)"))
        #expect(lines.contains("  fault     keepElbowStraight (t 10.9 s)"))
    }

    @Test func theProcessTableListsBrokersFirstWithUptimeAndCounters() {
        let lines = WatchRenderer.render(busyState(), now: 2, width: 120)
        let header = try! #require(lines.firstIndex { $0.hasPrefix("process") })
        #expect(lines[header] == "process           role    pid        uptime  counters")
        #expect(lines[header + 1] == "broker            broker  4242         13 s  published 3012")
        #expect(
            lines[header + 2] == "worker-cam0-left  worker  4250         12 s  poses 1200  events 14  gaps 0")
    }

    @Test func aConsumersLineShowsWhatItDidAndItsOutputFirst() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        state.apply(
            fixtures.health(
                "haptic", role: "haptic", pid: 4262, uptime: 40,
                counters: [
                    "events": 11, "gaps": 0, "played": 0, "deviceMissing": 1, "deviceReady": 0, "lost": 9,
                ]),
            at: 1)
        let lines = WatchRenderer.processLines(state, now: 1)
        #expect(
            lines.last
                == "haptic   haptic  4262         40 s  events 11  gaps 0  played 0  deviceReady 0  deviceMissing 1  lost 9"
        )
    }

    @Test func aProcessSilentForMoreThanThreeSecondsIsMarkedStale() {
        let lines = WatchRenderer.render(busyState(), now: 5.5, width: 120)
        #expect(lines.contains { $0.hasPrefix("broker ") && $0.contains("STALE 4 s") })
        #expect(lines.contains { $0.hasPrefix("cam0/left") && $0.hasSuffix("quiet 4 s") })
    }

    @Test(arguments: [20, 40, 60, 80, 132])
    func noLineIsWiderThanTheTerminal(width: Int) {
        let lines = WatchRenderer.render(busyState(), now: 2, width: width)
        #expect(lines.allSatisfy { $0.count <= width })
        // The same lines as on a wide terminal, each starting as it does there (clipped or laid
        // out to fit, never dropped or reordered).
        let wide = WatchRenderer.render(busyState(), now: 2, width: 200)
        #expect(lines.map { $0.prefix(6) } == wide.map { $0.prefix(6) })
        #expect(lines.count == 13)
    }

    @Test func anEmptyBusSaysItIsWaiting() {
        let lines = WatchRenderer.render(WatchState(), now: 0, width: 80)
        #expect(
            lines == [
                "kinesia watch | 0 sessions | 0 processes | 0 messages | 0 missed | 0 invalid", "",
                "waiting for messages on the bus...",
            ])
    }

    @Test func aSessionWithoutSnapshotWaitsForOne() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        state.apply(fixtures.event(.holdStarted, at: 2), at: 0)
        let lines = WatchRenderer.sessionLines(state.sessions[left]!, now: 0, width: 60)
        #expect(
            lines.dropFirst() == ["  state     waiting for a snapshot", "  last      holdStarted (t 2.0 s)"])
    }

    @Test func holdBarsAreClampedAndNeverCrash() {
        #expect(WatchRenderer.holdBar(0, width: 10) == "[----------]   0%")
        #expect(WatchRenderer.holdBar(0.5, width: 10) == "[#####-----]  50%")
        #expect(WatchRenderer.holdBar(1, width: 10) == "[##########] 100%")
        #expect(WatchRenderer.holdBar(7, width: 4) == "[####] 100%")
        #expect(WatchRenderer.holdBar(-1, width: 4) == "[----]   0%")
        #expect(WatchRenderer.holdBar(.nan, width: 4) == "[----]   0%")
    }

    @Test func hugeValuesRenderWithoutTrapping() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        var snapshot = MotionSnapshot()
        snapshot.value = 1e300
        snapshot.best = -1e300
        state.apply(fixtures.snapshot(snapshot, at: 1e300), at: 0)
        state.apply(fixtures.health("x", role: "worker", uptime: 1e300), at: 0)
        let lines = WatchRenderer.render(state, now: 1, width: 80)
        // Every line still says what it is; the huge figures are written out, then clipped.
        #expect(lines.count == 9)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines[0] == "kinesia watch | 1 session | 1 process | 2 messages | 0 missed | 0 invalid")
        #expect(lines[2].hasPrefix("cam0/left  t 10000000000000000525047602552044202"))
        #expect(lines[3].hasPrefix("  value     10000000000000000525047602552044202"))
        #expect(lines[3].count == 80)
        #expect(lines[4] == "  joints    not in view")
        #expect(lines[8].hasPrefix("x        worker  100          long"))
    }

    @Test func aTerminalFrameGoesHomeErasesEachLineEndAndEverythingBelow() {
        #expect(WatchRenderer.terminalFrame(["a", "bc"]) == "\u{1B}[Ha\u{1B}[K\nbc\u{1B}[K\n\u{1B}[J")
    }

    @Test func plainEventLinesAreTheAnalyzeLinesPrefixedWithTheSession() {
        let rep = Rep(peak: 142, faults: [.keepElbowStraight], start: 10.1, end: 12.345)
        #expect(
            WatchRenderer.eventLine(left, t: 12.345, .repRejected(rep))
                == "cam0/left       12.345  repRejected       peak 142.0  start 10.100  end 12.345  faults keepElbowStraight"
        )
    }

    @Test func progressLinesSummariseEachSessionAndTheProcesses() {
        let lines = WatchRenderer.progressLines(busyState(), now: 2)
        #expect(
            lines == [
                "cam0/left: value 87, best 142.2, 3 clean, 1 rejected, hold 50%, missing leftElbow leftWrist, "
                    + "confidence 0.82, setup lowConfidence, tooFar, 2 events",
                "processes: broker 13 s, worker-cam0-left 12 s",
            ])
    }

    @Test func theSummaryListsCleanAndRejectedRepsWithFaultsBestAndEvents() {
        var fixtures = WatchFixtures()
        var state = WatchState()
        state.apply(
            fixtures.event(.repCompleted(Rep(peak: 150.25, faults: [], start: 1, end: 3)), at: 3), at: 0)
        state.apply(fixtures.event(.formFault(.keepTrunkUpright), at: 5), at: 0)
        state.apply(
            fixtures.event(
                .repRejected(
                    Rep(peak: 120.5, faults: [.keepTrunkUpright, .keepElbowStraight], start: 4, end: 6.5)),
                at: 6.5), at: 0)
        state.apply(fixtures.event(.repCompleted(Rep(peak: 148, faults: [], start: 7, end: 9)), at: 9), at: 0)
        var snapshot = MotionSnapshot()
        snapshot.repCount = 2
        snapshot.rejectedCount = 1
        snapshot.best = 151.5
        state.apply(fixtures.snapshot(snapshot, at: 9), at: 0)
        let lines = WatchRenderer.summaryLines(state, labels: [left: "shoulderAbduction, left"])
        #expect(
            lines == [
                "cam0/left (shoulderAbduction, left)",
                "  clean reps      2   peaks 150.2, 148.0",
                "  rejected reps   1",
                "    t 6.5 s: keepTrunkUpright, keepElbowStraight (peak 120.5)",
                "  best            151.5°",
                "  events          4: 2 repCompleted, 1 formFault, 1 repRejected",
            ])
    }

    @Test func aSummaryOfNothingSaysSo() {
        #expect(WatchRenderer.summaryLines(WatchState()) == ["no session was heard on the bus"])
    }
}
