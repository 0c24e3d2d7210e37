import Foundation
import KinesiaSystem
import KinesiaTestSupport
import Synchronization
import Testing

@testable import KinesiaIngest

/// The wait for the pose detector's first frame, timed on a manual clock: a detector that
/// sends nothing is waited for 60 s (not less), then the ingest goes on with it still running
/// (a camera slow to start); a detector that fails within the wait is an error at once.
///
/// The detectors here are shell scripts standing in for `kinesia_detector.py` (`/bin/sh` as its
/// Python): the same spawn, pipes and reaping.
@Suite struct DetectorProcessClockTests {
    /// A detector running `script` with `/bin/sh`.
    static func detector(_ script: String, in scratch: ScratchDirectory, clock: ManualClock) throws
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

extension DetectorProcess.Item {
    fileprivate var isIdle: Bool {
        if case .idle = self { return true }
        return false
    }
}
