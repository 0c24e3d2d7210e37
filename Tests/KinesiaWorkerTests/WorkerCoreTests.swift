import KinesiaClient
import KinesiaMotion
import KinesiaSimulation
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// Hands poses to a ``WorkerCore`` the way `kinesia worker` does: each judged by a sequence
/// tracker first (duplicates and stale poses never reach the core), every publish reported back.
private struct WorkerFeed {
    var core: WorkerCore
    var tracker = SequenceTracker<Topic>()
    /// Every action of every delivery, in order.
    var actions: [WorkerCore.Action] = []
    /// How the next publishes go (`.sent` when empty).
    var outcomes: [WorkerCore.PublishOutcome] = []
    private var buffer: [WorkerCore.Action] = []
    private var next: [Topic: UInt64] = [:]

    init(_ sessions: [String], snapshotRate: Double = 15) throws {
        core = try WorkerCore(
            sessions: sessions.map { try WorkerSession(spec: $0) },
            snapshotRate: snapshotRate)
    }

    /// Delivers `pose` on `pose/<camera>/` from `stream`, numbered after the last one of that
    /// topic unless `sequence` is given.
    /// - Returns: The actions of this delivery (none for a duplicate).
    @discardableResult
    mutating func deliver(
        _ pose: Pose, camera: String, stream: UInt64 = 1, sequence: UInt64? = nil
    ) throws -> [WorkerCore.Action] {
        let topic = try Topic.pose(camera: camera)
        let number = sequence ?? next[topic, default: 0]
        next[topic] = number + 1
        let header = WireHeader(kind: .pose, streamID: StreamID(stream), sequence: number, sentAt: 0)
        let result = tracker.record(header, on: topic)
        guard result.isDelivered else { return [] }
        core.receive(FlatPose(pose), on: topic, header: header, sequence: result, into: &buffer)
        perform()
        return buffer
    }

    /// Starts the numbering of a new stream on `camera` at 0.
    mutating func restartNumbering(camera: String) throws {
        next[try Topic.pose(camera: camera)] = 0
    }

    mutating func deliverMalformed(topic: String, reason: BusDecodeFailure) -> [WorkerCore.Action] {
        core.receiveMalformed(topic: topic, reason: reason, into: &buffer)
        perform()
        return buffer
    }

    private mutating func perform() {
        actions += buffer
        for case .publish(let publication) in buffer {
            core.published(publication, outcome: outcomes.isEmpty ? .sent : outcomes.removeFirst())
        }
    }

    var counters: [String: Int] { core.healthCounters(sequence: tracker.totals) }

    /// The JSON lines published on `topic`, in order.
    func published(on topic: String) -> [String] {
        publications.filter { $0.topic.string == topic }.map(\.json)
    }

    var publications: [WorkerCore.Publication] {
        actions.compactMap { (action) -> WorkerCore.Publication? in
            if case .publish(let publication) = action { publication } else { nil }
        }
    }

    var notices: [WorkerCore.Notice] {
        actions.compactMap { (action) -> WorkerCore.Notice? in
            if case .notice(let notice) = action { notice } else { nil }
        }
    }
}

/// What one analyzer of its own finds in the poses: the event lines and the snapshot after each
/// accepted pose (as the worker would publish it: `isRunning` set).
private struct Reference {
    var events: [String] = []
    var snapshots: [(t: Double, snapshot: MotionSnapshot)] = []
    var analyzer: MotionAnalyzer

    init(_ exercise: Exercise, _ side: BodySide, poses: [Pose]) {
        analyzer = MotionAnalyzer(exercise: exercise, side: side)
        for pose in poses {
            let rejected = analyzer.rejectedPoses.total
            events += analyzer.process(pose).map { MotionJSON.encode($0, at: pose.timestamp) }
            guard analyzer.rejectedPoses.total == rejected else { continue }
            var snapshot = analyzer.snapshot
            snapshot.isRunning = true
            snapshots.append((pose.timestamp, snapshot))
        }
    }
}

struct WorkerCoreTests {
    /// Five reps on each side, alternating, at `frameRate` poses a second.
    private static func poses(
        _ exercise: Exercise = .shoulderAbduction, frameRate: Double = 30, start: Double = 0
    ) throws -> [Pose] {
        var options = SimulationOptions(seed: 11)
        options.frameRate = frameRate
        options.startTime = start
        return try ExerciseSimulator(exercise: exercise, options: options).run().poses
    }

    @Test func aPoseGoesToEverySessionOfItsCameraOnly() throws {
        var feed = try WorkerFeed([
            "cam0/left=shoulderAbduction:left", "cam0/right=shoulderAbduction:right",
            "cam1/left=shoulderAbduction:left",
        ])
        let poses = try Self.poses()
        for pose in poses { try feed.deliver(pose, camera: "cam0") }

        let left = Reference(.shoulderAbduction, .left, poses: poses)
        let right = Reference(.shoulderAbduction, .right, poses: poses)
        #expect(left.analyzer.snapshot.repCount > 0)
        #expect(feed.core.snapshot(camera: "cam0", session: "left") == left.analyzer.snapshot)
        #expect(feed.core.snapshot(camera: "cam0", session: "right") == right.analyzer.snapshot)
        // cam1's session saw nothing.
        #expect(
            feed.core.snapshot(camera: "cam1", session: "left")
                == MotionAnalyzer(exercise: .shoulderAbduction, side: .left).snapshot)
        #expect(!feed.publications.contains { $0.topic.camera == "cam1" })
        #expect(feed.counters["poses"] == poses.count)
        #expect(feed.counters["sessions"] == 3)
    }

    @Test func eventsArePublishedAsTheJSONLinesOfMotionJSON() throws {
        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left", "cam0/right=shoulderAbduction:right"])
        let poses = try Self.poses()
        for pose in poses { try feed.deliver(pose, camera: "cam0") }

        let left = Reference(.shoulderAbduction, .left, poses: poses)
        let right = Reference(.shoulderAbduction, .right, poses: poses)
        #expect(left.events.contains { $0.contains("\"repCompleted\"") })
        #expect(feed.published(on: "event/cam0/left/") == left.events)
        #expect(feed.published(on: "event/cam0/right/") == right.events)
        #expect(feed.publications.filter { $0.kind == .event }.allSatisfy { $0.topic.kind == .event })
        #expect(feed.counters["events"] == left.events.count + right.events.count)
    }

    @Test func snapshotsGoOutAtMostAtTheRateAndAtEveryCountChange() throws {
        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left"], snapshotRate: 15)
        let poses = try Self.poses(frameRate: 60)
        for pose in poses { try feed.deliver(pose, camera: "cam0") }

        let published = try feed.published(on: "snapshot/cam0/left/").map {
            try MotionJSON.decodeSnapshot($0)
        }
        let reference = Reference(.shoulderAbduction, .left, poses: poses)
        // Every snapshot is the analysis' snapshot after its pose, byte for byte.
        let byTime = Dictionary(reference.snapshots.map { ($0.t, $0.snapshot) }, uniquingKeysWith: { $1 })
        for line in feed.published(on: "snapshot/cam0/left/") {
            let t = try MotionJSON.decodeSnapshot(line).t
            #expect(line == MotionJSON.encode(try #require(byTime[t]), at: t))
        }
        // The first pose's, one at every count change, and otherwise at least 1/15 s apart.
        #expect(published.first?.t == poses.first?.timestamp)
        let times = Set(published.map(\.t))
        for (previous, next) in zip(reference.snapshots, reference.snapshots.dropFirst())
        where previous.snapshot.repCount != next.snapshot.repCount
            || previous.snapshot.rejectedCount != next.snapshot.rejectedCount
        {
            #expect(times.contains(next.t), "no snapshot at the count change at \(next.t)")
        }
        for (previous, next) in zip(published, published.dropFirst())
        where previous.snapshot.repCount == next.snapshot.repCount
            && previous.snapshot.rejectedCount == next.snapshot.rejectedCount
        {
            #expect(next.t - previous.t >= 1.0 / 15 - 1e-6, "snapshots at \(previous.t) and \(next.t)")
        }
        let duration = try #require(poses.last?.timestamp) - poses[0].timestamp
        #expect(published.count >= Int(duration * 15) - 1)
        #expect(published.count < poses.count / 3)
        #expect(published.last?.snapshot.repCount == reference.analyzer.snapshot.repCount)
        #expect(feed.counters["snapshots"] == published.count)
    }

    @Test func publishedSnapshotsSayTheSessionIsRunning() throws {
        var feed = try WorkerFeed(["cam0/left=wallSit:left"], snapshotRate: 1000)
        let poses = try Self.poses(.wallSit)
        for pose in poses { try feed.deliver(pose, camera: "cam0") }
        let snapshots = try feed.published(on: "snapshot/cam0/left/").map {
            try MotionJSON.decodeSnapshot($0)
        }
        #expect(snapshots.count == poses.count)
        #expect(snapshots.allSatisfy { $0.snapshot.isRunning })
        // The analyzer's own snapshot leaves isRunning to MotionSession.
        #expect(feed.core.snapshot(camera: "cam0", session: "left")?.isRunning == false)
    }

    @Test func aSenderRestartWithTimeGoingOnKeepsTheSessions() throws {
        let poses = try Self.poses()
        var uninterrupted = try WorkerFeed(["cam0/left=shoulderAbduction:left"])
        for pose in poses { try uninterrupted.deliver(pose, camera: "cam0") }

        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left"])
        let half = poses.count / 2
        for pose in poses[..<half] { try feed.deliver(pose, camera: "cam0", stream: 1) }
        try feed.restartNumbering(camera: "cam0")
        let first = try feed.deliver(poses[half], camera: "cam0", stream: 2)
        for pose in poses[(half + 1)...] { try feed.deliver(pose, camera: "cam0", stream: 2) }

        let topic = try Topic.pose(camera: "cam0")
        #expect(
            first.first
                == .notice(
                    .senderRestarted(
                        topic: topic, stream: StreamID(2), time: poses[half].timestamp, timeRestarted: [])))
        #expect(feed.publications == uninterrupted.publications)
        #expect(feed.counters["timeBaseRestarts"] == 0)
        #expect(feed.counters["restarts"] == 1)
        #expect(
            feed.core.snapshot(camera: "cam0", session: "left")
                == Reference(.shoulderAbduction, .left, poses: poses).analyzer.snapshot)
    }

    @Test func aSenderRestartWithTimeStartingOverKeepsTheCountsAndRestartsOnlyItsCamerasTime() throws {
        let poses = try Self.poses()
        let sessions = ["cam0/left=shoulderAbduction:left", "cam1/left=shoulderAbduction:left"]
        var feed = try WorkerFeed(sessions)
        for pose in poses {
            try feed.deliver(pose, camera: "cam0")
            try feed.deliver(pose, camera: "cam1")
        }
        // A pose going back in time on the same stream is rejected, not a restart.
        try feed.deliver(poses[0], camera: "cam0")
        #expect(feed.counters["rejected.cam0.left"] == 1)
        let once = Reference(.shoulderAbduction, .left, poses: poses)
        #expect(once.analyzer.snapshot.repCount > 0)
        #expect(
            feed.core.snapshot(camera: "cam0", session: "left")?.repCount == once.analyzer.snapshot.repCount)

        // cam0's sender starts over: a new stream whose time starts again at the beginning.
        try feed.restartNumbering(camera: "cam0")
        let before = feed.actions.count
        for pose in poses { try feed.deliver(pose, camera: "cam0", stream: 2) }
        let replayedEvents = feed.actions[before...].compactMap { (action) -> String? in
            if case .publish(let publication) = action, publication.kind == .event {
                publication.json
            } else {
                nil
            }
        }

        #expect(
            feed.notices.last
                == .senderRestarted(
                    topic: try Topic.pose(camera: "cam0"), stream: StreamID(2), time: poses[0].timestamp,
                    timeRestarted: ["left"]))
        #expect(feed.notices.last?.description.contains("keep their counts") == true)
        // The replay is analysed from the start of its time, as by a fresh session...
        #expect(replayedEvents == once.events)
        // ...and its reps add to the ones counted before: nothing counted was lost.
        let snapshot = feed.core.snapshot(camera: "cam0", session: "left")
        #expect(snapshot?.repCount == 2 * once.analyzer.snapshot.repCount)
        #expect(snapshot?.rejectedCount == 2 * once.analyzer.snapshot.rejectedCount)
        #expect(snapshot?.best == once.analyzer.snapshot.best)
        // cam1's session was not touched.
        #expect(feed.core.snapshot(camera: "cam1", session: "left") == once.analyzer.snapshot)
        let counters = feed.counters
        #expect(counters["timeBaseRestarts"] == 1)
        #expect(counters["restarts"] == 1)
        #expect(counters["rejected.cam0.left"] == 1)
        #expect(counters["rejected.timestampNotIncreasing"] == 1)
        #expect(counters["rejected"] == 1)
        #expect(counters["poses"] == 3 * poses.count + 1)
    }

    /// Issue 9, item 6: one pose far in the future from another sender on the topic (t=1e9)
    /// used to be accepted, so the sender's next pose looked like a restart whose time went
    /// back, and the session was reset to 0 reps with no event.
    @Test func oneForeignPoseFarInTheFutureNeitherWipesNorMovesTheSession() throws {
        let poses = try Self.poses()
        var uninterrupted = try WorkerFeed(["cam0/left=shoulderAbduction:left"])
        for pose in poses { try uninterrupted.deliver(pose, camera: "cam0") }

        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left"])
        let middle = poses.count * 2 / 3
        for pose in poses[..<middle] { try feed.deliver(pose, camera: "cam0", stream: 1) }
        let countsBefore = feed.core.snapshot(camera: "cam0", session: "left")?.repCount ?? 0
        #expect(countsBefore > 0)
        var stray = poses[middle]
        stray.timestamp = 1e9
        let strayActions = try feed.deliver(stray, camera: "cam0", stream: 99, sequence: 0)
        // Held: no event, no snapshot at t=1e9.
        #expect(!strayActions.contains { if case .publish = $0 { true } else { false } })
        #expect(feed.core.snapshot(camera: "cam0", session: "left")?.repCount == countsBefore)
        for pose in poses[middle...] { try feed.deliver(pose, camera: "cam0", stream: 1) }

        let snapshot = feed.core.snapshot(camera: "cam0", session: "left")
        #expect(snapshot?.repCount == uninterrupted.core.snapshot(camera: "cam0", session: "left")?.repCount)
        #expect(snapshot == uninterrupted.core.snapshot(camera: "cam0", session: "left"))
        #expect(feed.publications == uninterrupted.publications)
        let counters = feed.counters
        #expect(counters["timeBaseRestarts"] == 0)
        #expect(counters["rejected.timestampOutlier"] == 1)
        #expect(counters["rejected.cam0.left"] == 1)
        #expect(counters["restarts"] == 2)
        // Every restart notice says the sessions were kept.
        for case .senderRestarted(_, _, _, let restarted) in feed.notices { #expect(restarted.isEmpty) }
    }

    /// A foreign pose with an old timestamp is a restart whose time goes back: the session's
    /// time starts over there, and its counts stay.
    @Test func oneForeignPoseFromThePastKeepsTheCounts() throws {
        let poses = try Self.poses()
        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left"])
        for pose in poses { try feed.deliver(pose, camera: "cam0", stream: 1) }
        let counted = try #require(feed.core.snapshot(camera: "cam0", session: "left"))
        #expect(counted.repCount > 0)
        var stray = poses[0]
        stray.timestamp = 0
        try feed.deliver(stray, camera: "cam0", stream: 99, sequence: 0)
        let after = try #require(feed.core.snapshot(camera: "cam0", session: "left"))
        #expect(after.repCount == counted.repCount)
        #expect(after.rejectedCount == counted.rejectedCount)
        #expect(after.best == counted.best)
        #expect(feed.counters["timeBaseRestarts"] == 1)
        #expect(feed.notices.last?.description.contains("left keep their counts") == true)
    }

    @Test func gapsDuplicatesAndRestartsAreCounted() throws {
        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left"])
        let poses = try Self.poses()
        try feed.deliver(poses[0], camera: "cam0", sequence: 0)
        try feed.deliver(poses[1], camera: "cam0", sequence: 1)
        let gap = try feed.deliver(poses[2], camera: "cam0", sequence: 4)
        let duplicate = try feed.deliver(poses[3], camera: "cam0", sequence: 4)
        try feed.deliver(poses[4], camera: "cam0", stream: 2, sequence: 0)

        let topic = try Topic.pose(camera: "cam0")
        #expect(gap.first == .notice(.gap(topic: topic, missed: 2, sequence: 4)))
        #expect(duplicate.isEmpty)
        let counters = feed.counters
        #expect(counters["gaps"] == 2)
        #expect(counters["duplicates"] == 1)
        #expect(counters["restarts"] == 1)
        #expect(counters["poses"] == 4)
        #expect(feed.notices.count == 2)
        #expect(feed.notices.allSatisfy { !$0.isWarning })
    }

    @Test func malformedMessagesAreCountedByReasonAndWarnedAboutSparingly() throws {
        var feed = try WorkerFeed(["cam0/left=squat:left"])
        var warnings = 0
        for _ in 0..<1000 {
            warnings += feed.deliverMalformed(topic: "pose/cam0/", reason: .frameCount(3)).count
        }
        let truncated = feed.deliverMalformed(
            topic: "pose/cam0/", reason: .wire(.truncated(needed: 30, available: 2)))
        let counters = feed.counters
        #expect(counters["decodeErrors"] == 1001)
        #expect(counters["decodeErrors.frameCount"] == 1000)
        #expect(counters["decodeErrors.truncated"] == 1)
        #expect(counters["poses"] == 0)
        // The first ten of a reason, then every thousandth.
        #expect(warnings == 11)
        #expect(truncated.count == 1)
        let warning = try #require(feed.notices.last)
        #expect(warning.isWarning)
        #expect(warning.description.contains("\"pose/cam0/\" (1 so far)"))
    }

    @Test func aFailedPublishIsCountedByReasonAndNotAsSent() throws {
        // A snapshot after every pose: three poses, three publications.
        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left"], snapshotRate: 1000)
        let poses = try Self.poses()
        feed.outcomes = [.notQueued, .failed(reason: "socket")]
        for pose in poses.prefix(3) { try feed.deliver(pose, camera: "cam0") }
        try #require(feed.publications.map(\.kind) == [.snapshot, .snapshot, .snapshot])
        let counters = feed.counters
        #expect(counters["publishFailures"] == 2)
        #expect(counters["publishFailures.notQueued"] == 1)
        #expect(counters["publishFailures.socket"] == 1)
        #expect(counters["snapshots"] == 1)
    }

    @Test func aPoseOfAnotherCameraIsIgnored() throws {
        var feed = try WorkerFeed(["cam0/left=shoulderAbduction:left"])
        let poses = try Self.poses()
        for pose in poses.prefix(30) {
            #expect(try feed.deliver(pose, camera: "cam9").isEmpty)
        }
        #expect(feed.counters["poses"] == 0)
        #expect(
            feed.core.snapshot(camera: "cam0", session: "left")
                == MotionAnalyzer(exercise: .shoulderAbduction, side: .left).snapshot)
    }

    @Test func theActionBufferIsEmptiedOnEveryDelivery() throws {
        var core = try WorkerCore(
            sessions: [WorkerSession(camera: "cam0", name: "left", exercise: .squat, side: .left)],
            snapshotRate: 15)
        var actions: [WorkerCore.Action] = [
            .notice(.gap(topic: try Topic.pose(camera: "x"), missed: 1, sequence: 1))
        ]
        let header = WireHeader(kind: .pose, streamID: StreamID(1), sequence: 0, sentAt: 0)
        core.receive(
            FlatPose(timestamp: 1), on: try Topic.pose(camera: "cam9"), header: header, sequence: .inOrder,
            into: &actions)
        #expect(actions.isEmpty)
    }
}
