import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

/// Every wait is bounded (``waitUntil(timeout:isolation:_:)``, a time limit on the suite): a
/// regression fails within seconds instead of hanging the run.
@MainActor
// A guard against a hang, not a timing: its tests run on the cooperative pool the whole test
// process shares (two threads here), so the time it counts includes the queueing.
@Suite(.timeLimit(.minutes(3)))
struct MotionSessionTests {
    /// Two reps (one clean, one with a fault), with visibility and setup changes.
    private static func poses(side: BodySide = .left, exercise: Exercise = .shoulderAbduction) -> [Pose] {
        var script = PoseScript(exercise, side: side)
        script.empty(for: 0.5)
        script.hold(0, for: 1)
        script.rep(peak: 100)
        script.rep(peak: 110, duration: 3) { body, fraction in
            if fraction > 0.3, fraction < 0.7 { body.trunkLean = 30 }
        }
        script.hold(0, for: 1) { body, _ in body.scale = 0.3 }
        return script.poses
    }

    /// Reads exactly `count` events from `stream`.
    private static func read(_ count: Int, from stream: AsyncStream<MotionEvent>) async -> [MotionEvent] {
        var events: [MotionEvent] = []
        guard count > 0 else { return events }
        for await event in stream {
            events.append(event)
            if events.count == count { break }
        }
        return events
    }

    @Test func processReturnsThePoseEventsAndUpdatesTheSnapshot() {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        #expect(session.exercise == .shoulderAbduction)
        #expect(session.side == .left)
        var analyzer = MotionAnalyzer(exercise: .shoulderAbduction, side: .left)
        for pose in Self.poses() {
            #expect(session.process(pose) == analyzer.process(pose))
            #expect(session.snapshot == analyzer.snapshot)
        }
        #expect(session.snapshot.repCount == 1)
        #expect(session.snapshot.rejectedCount == 1)
        #expect(!session.snapshot.isRunning)
    }

    @Test func twoListenersGetEveryEventThatProcessReturns() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let first = session.events()
        let second = session.events()
        var returned: [MotionEvent] = []
        for pose in Self.poses() { returned += session.process(pose) }
        #expect(
            returned.map(\.name) == [
                "visibilityChanged", "repCompleted", "formFault", "repRejected", "setupChanged",
            ])
        #expect(await Self.read(returned.count, from: first) == returned)
        #expect(await Self.read(returned.count, from: second) == returned)
    }

    @Test func aListenerThatStopsDoesNotDisturbTheOther() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let quitter = Task { @MainActor in
            var seen = 0
            for await _ in session.events() {
                seen += 1
                break
            }
            return seen
        }
        let stayer = session.events()
        // Let the quitter subscribe before anything is sent.
        #expect(await waitUntil(timeout: .seconds(10)) { session.listenerCount == 2 })
        var returned: [MotionEvent] = []
        for pose in Self.poses() { returned += session.process(pose) }
        #expect(await quitter.value == 1)
        #expect(await Self.read(returned.count, from: stayer) == returned)
        // The quitter's stream is gone; more events still reach the other listener.
        #expect(await waitUntil(timeout: .seconds(10)) { session.listenerCount <= 1 })
        #expect(session.listenerCount == 1)
        session.reset()
        var more: [MotionEvent] = []
        for pose in Self.poses().map({
            var p = $0; p.timestamp += 100; return p
        }) { more += session.process(pose) }
        #expect(await Self.read(more.count, from: stayer) == more)
    }

    @Test func aListenerGetsOnlyEventsAfterItSubscribed() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let poses = Self.poses()
        var early: [MotionEvent] = []
        for pose in poses.prefix(60) { early += session.process(pose) }
        #expect(!early.isEmpty)
        let late = session.events()
        var rest: [MotionEvent] = []
        for pose in poses.dropFirst(60) { rest += session.process(pose) }
        #expect(await Self.read(rest.count, from: late) == rest)
    }

    @Test func aListenerThatFallsBehindKeepsTheNewestEventsOfItsBuffer() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let small = session.events(bufferingPolicy: .bufferingNewest(2))
        var returned: [MotionEvent] = []
        for pose in Self.poses() { returned += session.process(pose) }
        #expect(returned.count == 5)
        #expect(await Self.read(2, from: small) == Array(returned.suffix(2)))
    }

    @Test func runReadsAFiniteProviderToItsEnd() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let listener = session.events()
        let poses = Self.poses()
        let (reference, events) = analyze(poses, exercise: .shoulderAbduction)
        await session.run(with: PoseList(frames: poses))
        var expected = reference.snapshot
        expected.isRunning = false
        #expect(session.snapshot == expected)
        #expect(await Self.read(events.count, from: listener) == events)
    }

    @Test func startReadsInTheBackgroundAndStopEndsIt() async throws {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let poses = Self.poses()
        session.start(with: PoseList(frames: poses))
        #expect(session.snapshot.isRunning)
        // The provider ends by itself: the session stops running.
        #expect(await waitUntil(timeout: .seconds(120)) { !session.snapshot.isRunning })
        #expect(session.snapshot.repCount == 1)
        #expect(session.snapshot.rejectedCount == 1)

        // A provider that never ends runs until stop().
        let endless = EndlessProvider()
        session.start(with: endless)
        #expect(session.snapshot.isRunning)
        for _ in 0..<10 { await Task.yield() }
        session.stop()
        #expect(!session.snapshot.isRunning)
        // The counts stay, and poses can still be given by hand.
        #expect(session.snapshot.repCount == 1)
        let rejectedBefore = session.rejectedPoses.total
        // A pose far later is held until the next one confirms the jump (a lone outlier never
        // moves the session's time); then both are analysed: nobody in view, no value.
        session.process(Pose(timestamp: 1e9))
        session.process(Pose(timestamp: 1e9 + 0.1))
        #expect(session.rejectedPoses.total == rejectedBefore)
        #expect(session.snapshot.value == nil)
    }

    @Test func runEndsWhenItsTaskIsCancelled() async {
        let session = MotionSession(exercise: .squat, side: .right)
        let reading = Task { @MainActor in await session.run(with: EndlessProvider()) }
        #expect(await waitUntil(timeout: .seconds(10)) { session.snapshot.isRunning })
        for _ in 0..<20 { await Task.yield() }
        #expect(session.snapshot.isRunning)
        reading.cancel()
        await reading.value
        #expect(!session.snapshot.isRunning)
    }

    @Test func stopEndsARunToo() async {
        let session = MotionSession(exercise: .squat, side: .right)
        let reading = Task { @MainActor in await session.run(with: EndlessProvider()) }
        #expect(await waitUntil(timeout: .seconds(10)) { session.snapshot.isRunning })
        session.stop()
        #expect(!session.snapshot.isRunning)
        // The run returns by itself, without its task being cancelled.
        let ended = Flag()
        let watcher = Task { @MainActor in
            await reading.value
            ended.set()
        }
        // Long: a loaded parallel run can starve the main actor for a minute.
        #expect(await waitUntil(timeout: .seconds(120)) { ended.isSet })
        reading.cancel()
        await watcher.value
    }

    @Test func aNewReadingEndsARunSoThatPosesOfTwoSourcesNeverMix() async {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        let reading = Task { @MainActor in await session.run(with: EndlessProvider()) }
        #expect(await waitUntil(timeout: .seconds(10)) { session.snapshot.isRunning })
        let ended = Flag()
        let watcher = Task { @MainActor in
            await reading.value
            ended.set()
        }
        // Later than anything the endless source gave (a session's clock only goes forward).
        let later = Self.poses().map { pose in
            var pose = pose
            pose.timestamp += 1000
            return pose
        }
        session.start(with: PoseList(frames: later))
        // Long: a loaded parallel run can starve the main actor for a minute.
        #expect(await waitUntil(timeout: .seconds(120)) { ended.isSet })
        #expect(await waitUntil(timeout: .seconds(120)) { !session.snapshot.isRunning })
        // Only the new source was read after it started: its reps, and no pose of either
        // source dropped as going back in time, as interleaved poses of the two would be.
        #expect(session.snapshot.repCount == 1)
        #expect(session.snapshot.rejectedCount == 1)
        #expect(session.rejectedPoses.total == 0)
        reading.cancel()
        await watcher.value
    }

    @Test func aSessionsTimeOnlyGoesForwardAcrossReadingsAndResets() async {
        let poses = Self.poses()
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        await session.run(with: PoseList(frames: poses))
        #expect(session.snapshot.repCount == 1)
        session.reset()
        // The same recording again: every pose is at or before the last one read.
        await session.run(with: PoseList(frames: poses))
        #expect(session.rejectedPoses.timestampNotIncreasing == poses.count)
        #expect(session.snapshot.repCount == 0)
        // A new session reads it as the first did.
        let fresh = MotionSession(exercise: .shoulderAbduction, side: .left)
        await fresh.run(with: PoseList(frames: poses))
        #expect(fresh.snapshot.repCount == 1)
    }

    @Test func twoSessionsFedFromOneLoopMeasureTheirOwnSides() async {
        // The left arm does two reps, the right arm one, in the same poses.
        var script = PoseScript(.shoulderAbduction, side: .left)
        script.hold(0, for: 1)
        script.rep(peak: 100, duration: 2) { body, _ in body.right.armElevation = 0 }
        script.rep(peak: 100, duration: 2) { body, fraction in
            body.right.armElevation = 120 * (1 - cos(2 * .pi * fraction)) / 2
        }
        script.hold(0, for: 1)
        let left = MotionSession(exercise: .shoulderAbduction, side: .left)
        let right = MotionSession(exercise: .shoulderAbduction, side: .right)
        let leftEvents = left.events()
        let rightEvents = right.events()
        var returned: (left: [MotionEvent], right: [MotionEvent]) = ([], [])
        let loop = Task { @MainActor in
            for await pose in PoseList(frames: script.poses).poses() {
                returned.left += left.process(pose)
                returned.right += right.process(pose)
            }
        }
        await loop.value
        #expect(left.snapshot.repCount == 2)
        #expect(right.snapshot.repCount == 1)
        #expect((right.snapshot.lastRep?.peak ?? 0) > 115)
        #expect(await Self.read(returned.left.count, from: leftEvents) == returned.left)
        #expect(await Self.read(returned.right.count, from: rightEvents) == returned.right)
    }

    @Test func baselineAndResetGoThroughTheSession() {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        session.startBaseline(reps: 1)
        #expect(session.snapshot.baseline == BaselineProgress(completed: 0, target: 1, value: nil))
        var events: [MotionEvent] = []
        for pose in Self.poses() { events += session.process(pose) }
        #expect(events.contains { if case .baselineCompleted = $0 { true } else { false } })
        #expect(session.snapshot.baseline?.isComplete == true)
        session.reset()
        #expect(session.snapshot.baseline == nil)
        #expect(session.snapshot.repCount == 0)
    }

    @Test func badPosesAreCountedAndIgnored() {
        let session = MotionSession(exercise: .shoulderAbduction, side: .left)
        #expect(session.process(Pose(timestamp: 1)).isEmpty)
        #expect(session.process(Pose(timestamp: 1)).isEmpty)
        #expect(session.process(Pose(timestamp: .nan)).isEmpty)
        #expect(session.rejectedPoses == PoseRejections(nonFinite: 1, timestampNotIncreasing: 1))
    }

    @Test func listenersEndWhenTheSessionGoesAway() async {
        var session: MotionSession? = MotionSession(exercise: .squat, side: .right)
        let stream = session?.events()
        session = nil
        var count = 0
        if let stream {
            for await _ in stream { count += 1 }
        }
        #expect(count == 0)
    }
}

/// A provider that yields empty poses until its reader goes away.
struct EndlessProvider: PoseProvider {
    func poses() -> AsyncStream<Pose> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Pose.self, bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            var time = 0.0
            while !Task.isCancelled {
                time += 1 / 30
                if case .terminated = continuation.yield(Pose(timestamp: time)) { return }
                // Paced (a thousand poses a second, a camera's thirty times over): an unpaced
                // source keeps a thread of the test pool busy for as long as it runs, and two
                // of them starved the main actor of the other tests in a loaded CI run.
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// A flag set from the main actor and read by tests.
@MainActor
final class Flag {
    private(set) var isSet = false
    func set() { isSet = true }
}
