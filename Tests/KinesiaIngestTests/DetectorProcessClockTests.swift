import Foundation
import KinesiaSystem
import KinesiaTestSupport
import Synchronization
import Testing

@testable import KinesiaIngest

/// The wait for the pose detector's first frame, timed on a manual clock: a detector that
/// sends nothing is waited for 60 s (not less), then the ingest goes on with it still running
/// (a camera slow to start); a detector that fails within the wait is an error at once; a
/// detector that ignores its SIGTERM is killed when the same clock has run the grace.
///
/// The detectors here are shell scripts standing in for `kinesia_detector.py` (`/bin/sh` as its
/// Python): the same spawn, pipes and reaping.
@Suite struct DetectorProcessClockTests {
    /// A detector running `script` with `/bin/sh`.
    static func detector(_ script: String, in scratch: ScratchDirectory, clock: some Clock<Duration>) throws
        -> DetectorProcess
    {
        let path = scratch.path("kinesia_detector.sh")
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return try DetectorProcess(
            DetectorEnvironment(python: "/bin/sh", script: path), arguments: [], onMessage: { _ in },
            clock: clock)
    }

    @Test func theFirstFrameIsWaitedForSixtySecondsThenTheIngestGoesOn() {
        #expect(DetectorProcess.firstFrameTimeout == .seconds(60))
        let wait = FirstFrameWait(timeout: DetectorProcess.firstFrameTimeout, startedAt: .seconds(5))
        #expect(wait.decision(at: .seconds(5)) == .read)
        #expect(wait.decision(at: .seconds(65) - .milliseconds(1)) == .read, "59.999 s: still waiting")
        #expect(wait.decision(at: .seconds(65)) == .goOn, "60 s: the ingest goes on")
        #expect(wait.decision(at: .seconds(300)) == .goOn)
    }

    @Test(.tags(.process)) func aDetectorThatSendsNoFrameIsLeftRunningOnceTheClockPassesTheTimeout() throws {
        let scratch = try ScratchDirectory("detector-clock")
        let clock = ManualClock()
        let detector = try Self.detector("exec sleep 60\n", in: scratch, clock: clock)
        defer { detector.stop() }
        // The wait runs here, timed from the detector's start; another thread moves the clock
        // and looks whether the wait has ended.
        let waitEnded = Mutex(false)
        let endedAt59Seconds = Mutex<Bool?>(nil)
        let mover = Thread {
            clock.advance(by: .seconds(59))
            Thread.sleep(forTimeInterval: 0.3)  // three reads of the detector's output
            endedAt59Seconds.withLock { $0 = waitEnded.withLock { $0 } }
            clock.advance(by: .seconds(1))
        }
        mover.start()
        try detector.waitForFirstFrame(timeout: DetectorProcess.firstFrameTimeout)
        waitEnded.withLock { $0 = true }
        #expect(endedAt59Seconds.withLock { $0 } == false, "59 s on the ingest's clock: still waiting")
        #expect(clock.now.offset >= .seconds(60), "the wait ended at 60 s, without an error")
        #expect(kill(detector.pid, 0) == 0, "the detector is left running")
        #expect(detector.next(timeout: .zero).isIdle, "and has sent nothing yet")
    }

    @Test(.tags(.process)) func aDetectorThatFailsWithinTheWaitIsAnErrorWithItsMessage() throws {
        let scratch = try ScratchDirectory("detector-clock")
        let detector = try Self.detector(
            "echo 'error: cannot open /dev/video9: no such camera' >&2\nexit 1\n", in: scratch,
            clock: ManualClock())
        defer { detector.stop() }
        #expect(
            throws: PoseSourceError.failure(
                "the pose detector failed after 0 frames: cannot open /dev/video9: no such camera")
        ) {
            try detector.waitForFirstFrame(timeout: DetectorProcess.firstFrameTimeout)
        }
    }
}

extension DetectorProcessClockTests {
    @Test(.tags(.process)) func aDetectorThatIgnoresItsStopIsKilledWhenItsClockReachesTheGrace() throws {
        #expect(DetectorProcess.stopGrace == .seconds(2))
        let scratch = try ScratchDirectory("detector-clock")
        let ready = scratch.path("ready")
        let clock = ReadCountingClock()
        let detector = try Self.detector(
            "trap '' TERM\ntouch '\(ready)'\nwhile :; do sleep 0.05; done\n", in: scratch, clock: clock)
        let started = ContinuousClock.now
        while !FileManager.default.fileExists(atPath: ready), ContinuousClock.now - started < .seconds(10) {
            Thread.sleep(forTimeInterval: 0.005)
        }
        try #require(FileManager.default.fileExists(atPath: ready), "the detector has set its trap")
        // The stop runs here; another thread moves the clock once the grace has started, and
        // looks whether the detector still runs a millisecond before it is over.
        let before = clock.reads
        let pid = detector.pid
        let graceStarted = Mutex(false)
        let runningAtAlmostTheGrace = Mutex<Bool?>(nil)
        let mover = Thread {
            graceStarted.withLock { $0 = clock.waitForReads(before + 2) }
            clock.base.advance(by: DetectorProcess.stopGrace - .milliseconds(1))
            clock.waitForReads(clock.reads + 2)
            runningAtAlmostTheGrace.withLock { $0 = kill(pid, 0) == 0 }
            clock.base.advance(by: .milliseconds(1))
        }
        mover.start()
        let status = detector.stop()  // (it ends reaped: its deinit's stop returns at once)
        #expect(graceStarted.withLock { $0 }, "the grace is timed on the detector's clock")
        #expect(runningAtAlmostTheGrace.withLock { $0 } == true, "1.999 s on its clock: still running")
        #expect(status == .signaled(.kill), "killed once its clock reached the grace")
    }
}

extension DetectorProcess.Item {
    fileprivate var isIdle: Bool {
        if case .idle = self { return true }
        return false
    }
}
