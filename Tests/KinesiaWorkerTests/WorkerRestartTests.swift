import KinesiaMotion
import KinesiaSimulation
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// A worker killed at any moment and restarted with what its state directory kept (each
/// session's identity and last journaled sequence numbers, each camera's pose segments)
/// publishes, with the run before the kill, exactly what one run without a fault publishes:
/// the same events and snapshots, with the same stream ids and sequence numbers, none twice.
/// Driven with no I/O: the replay server is the list of poses the ingest journaled.
struct WorkerRestartTests {
    private static let sessions = ["cam0/left=shoulderAbduction:left", "cam0/right=shoulderAbduction:right"]
    private static let identities = [
        WorkerCore.SessionIdentity(stream: StreamID(0x51)),
        WorkerCore.SessionIdentity(stream: StreamID(0x52)),
    ]
    private static let poseStream = StreamID(0xCA)

    /// One published message, as a consumer identifies it.
    private struct Published: Hashable, CustomStringConvertible {
        var topic: String
        var stream: StreamID
        var sequence: UInt64
        var json: String

        var description: String { "\(topic) \(stream) #\(sequence) \(json)" }
    }

    /// A worker process: its core, what it published, what its state directory holds.
    private struct Worker {
        var core: WorkerCore
        var published: [Published] = []
        /// The last sequence number journaled per topic (journaled before each publish).
        var journaled: [String: UInt64] = [:]
        var segments: [PoseSegment] = []
        var requests: [PoseReplayRequest] = []
        /// The number the core gave each request.
        var requestIDs: [PoseReplayRequest: UInt32] = [:]
        /// The new runs started, by session name.
        var newRuns: [String: StreamID] = [:]
        private var actions: [WorkerCore.Action] = []

        init(
            identities: [WorkerCore.SessionIdentity], segments: [PoseSegment]?,
            restoring: (inout WorkerCore) throws -> Void = { _ in }
        ) throws {
            let specs = try WorkerRestartTests.sessions.map {
                try WorkerSession(spec: $0)
            }
            core = try WorkerCore(
                sessions: specs, snapshotRate: 15, identities: identities,
                resume: segments.map { ["cam0": $0] } ?? [:])
            try restoring(&core)
            self.segments = segments ?? []
            core.start(now: .zero, into: &actions)
            perform()
        }

        mutating func live(
            _ poses: [Pose], _ range: Range<Int>, stream: StreamID = WorkerRestartTests.poseStream
        )
            throws
        {
            for index in range {
                let header = WireHeader(kind: .pose, streamID: stream, sequence: UInt64(index), sentAt: 0)
                core.receiveLive(
                    FlatPose(poses[index]), on: try Topic.pose(camera: "cam0"), header: header, now: .zero,
                    into: &actions)
                perform()
            }
        }

        /// Answers the requests made so far: the ingest's journal no longer has the poses before
        /// `first` (retention), and holds through `last`.
        mutating func fail(_ request: PoseReplayRequest, first: UInt64?) {
            core.replayFailed(
                camera: "cam0", requestID: requestIDs[request] ?? 0, stream: request.stream, first: first,
                now: .zero,
                into: &actions)
            perform()
        }

        mutating func refuseReplay(first: UInt64) {
            let refused = requests
            requests = []
            for request in refused {
                core.replayFailed(
                    camera: "cam0", requestID: requestIDs[request] ?? 0, stream: request.stream, first: first,
                    now: .zero, into: &actions)
                perform()
            }
        }

        /// Answers the requests made so far from the journal (`held` poses), in batches of 64.
        mutating func serveReplay(_ poses: [Pose], held: Int) {
            while !requests.isEmpty {
                let request = requests.removeFirst()
                let last = UInt64(held - 1)
                var sequence = request.from
                var sent = 0
                while sequence <= min(request.through ?? last, last), sent < 64 {
                    core.receiveReplayed(
                        FlatPose(poses[Int(sequence)]), camera: "cam0", stream: request.stream,
                        sequence: sequence, now: .zero,
                        into: &actions)
                    perform()
                    sequence += 1
                    sent += 1
                }
                let end = ReplayBatchEnd(
                    requestID: requestIDs[request] ?? 0, stream: request.stream, first: 0, last: last,
                    next: sequence, count: UInt32(sent))
                core.replayEnded(camera: "cam0", end: end, now: .zero, into: &actions)
                perform()
            }
        }

        private mutating func perform() {
            for action in actions {
                switch action {
                case .publish(let publication):
                    journaled[publication.topic.string] = publication.sequence
                    published.append(
                        Published(
                            topic: publication.topic.string, stream: publication.stream,
                            sequence: publication.sequence, json: publication.json))
                    core.published(publication, outcome: .sent)
                case .record(_, let segments): self.segments = segments
                case .recordSkip(_, let stream, let sequences):
                    if let index = segments.lastIndex(where: { $0.stream == stream }) {
                        segments[index].skipped.append(sequences)
                    }
                case .requestPoses(_, let request, let id):
                    requests.append(request)
                    requestIDs[request] = id
                case .newRun(_, let session, let stream): newRuns[session] = stream
                case .notice: break
                }
            }
        }

        /// The identities a restart reads back from the state directory.
        var identitiesAfterRestart: [WorkerCore.SessionIdentity] {
            WorkerRestartTests.identities.enumerated().map { index, identity in
                let name = index == 0 ? "left" : "right"
                return WorkerCore.SessionIdentity(
                    stream: identity.stream, lastEvent: journaled["event/cam0/\(name)/"],
                    lastSnapshot: journaled["snapshot/cam0/\(name)/"])
            }
        }
    }

    private static func poses() throws -> [Pose] {
        var options = SimulationOptions(seed: 5)
        options.frameRate = 30
        return try ExerciseSimulator(exercise: .shoulderAbduction, options: options).run().poses
    }

    private static func reference(_ poses: [Pose]) throws -> [Published] {
        var worker = try Worker(identities: identities, segments: nil)
        try worker.live(poses, 0..<poses.count)
        return worker.published
    }

    @Test func aRestartedWorkerPublishesWhatWasMissingWithTheSameNumbersAndNothingTwice() throws {
        let poses = try Self.poses()
        let reference = try Self.reference(poses)
        #expect(reference.contains { $0.json.contains("\"repCompleted\"") })
        // Kill points all along the session, at least one in every second of it.
        for kill in stride(from: 1, to: poses.count, by: 61) {
            var before = try Worker(identities: Self.identities, segments: nil)
            try before.live(poses, 0..<kill)
            #expect(before.segments == [PoseSegment(stream: Self.poseStream, first: 0)])

            // The ingest went on meanwhile: `kill + 10` poses are journaled; the restarted
            // worker subscribes first and holds the live poses while it replays.
            let held = min(poses.count, kill + 10)
            var after = try Worker(identities: before.identitiesAfterRestart, segments: before.segments)
            #expect(
                after.requests == [PoseReplayRequest(stream: Self.poseStream, from: 0, waitsForServer: true)])
            try after.live(poses, held..<min(poses.count, held + 5))
            after.serveReplay(poses, held: min(poses.count, held + 5))
            try after.live(poses, min(poses.count, held + 5)..<poses.count)

            let both = before.published + after.published
            #expect(
                both == reference,
                "kill after pose \(kill): \(both.count) published, \(reference.count) expected")
            #expect(after.core.regenerated == before.published.count, "kill after pose \(kill)")
            #expect(after.core.isCatchingUp == false)
        }
    }

    @Test func aKillBetweenTheJournalAndTheSendLeavesTheEventToReplayNotToTheRestart() throws {
        let poses = try Self.poses()
        let reference = try Self.reference(poses)
        // The pose that completes the first rep: its event was journaled, then the worker died
        // before sending it.
        var probe = try Worker(identities: Self.identities, segments: nil)
        var kill = 0
        while kill < poses.count, !probe.published.contains(where: { $0.json.contains("\"repCompleted\"") }) {
            try probe.live(poses, kill..<(kill + 1))
            kill += 1
        }
        var sent = probe.published
        let unsent = sent.removeLast()

        var after = try Worker(identities: probe.identitiesAfterRestart, segments: probe.segments)
        after.serveReplay(poses, held: poses.count)
        #expect(!after.published.contains(unsent), "a journaled message is never published twice")
        // A consumer gets it from the worker's journal (replay); with it, nothing is missing.
        #expect(sent + [unsent] + after.published == reference)
    }

    @Test func posesLostOnTheWayAreReplayedBeforeTheAnalysisGoesOn() throws {
        let poses = try Self.poses()
        let reference = try Self.reference(poses)
        var worker = try Worker(identities: Self.identities, segments: nil)
        // Every 40th pose and a run of 50 never arrive live (a full queue, a broker restart).
        let dropped = Set(stride(from: 40, to: poses.count, by: 40)).union(200..<250)
        for index in 0..<poses.count where !dropped.contains(index) {
            try worker.live(poses, index..<(index + 1))
            worker.serveReplay(poses, held: index + 1)
        }
        #expect(worker.published == reference)
        #expect(worker.core.healthCounters(sequence: SequenceTotals())["posesReplayed"] == dropped.count)
        #expect(worker.core.healthCounters(sequence: SequenceTotals())["posesLost"] == 0)
    }

    /// The ingest's journal no longer has the first poses the sessions were built on (a finite
    /// source that ended, or retention). The restarted worker cannot regenerate what it
    /// published, so it must not number new content with the numbers it used: its sessions
    /// start a new run at the first pose it has, on new streams numbered from 0, and say so.
    /// Before, it analysed the new poses from scratch under the old streams and suppressed
    /// every event as already published (events 0, regenerated 1825, nothing logged).
    @Test func aRestartedWorkerThatCannotRebuildStartsANewRunOnNewStreams() throws {
        let poses = try Self.poses()
        var before = try Worker(identities: Self.identities, segments: nil)
        try before.live(poses, 0..<300)
        #expect(before.published.contains { $0.topic.hasPrefix("event/") })
        var after = try Worker(identities: before.identitiesAfterRestart, segments: before.segments)
        // Retention removed poses 0...149.
        after.refuseReplay(first: 150)
        after.serveReplay(poses, held: 300)
        try after.live(poses, 300..<poses.count)
        #expect(after.core.runsRestarted == 2)
        #expect(Set(after.newRuns.keys) == ["left", "right"])
        #expect(!after.newRuns.values.contains { Self.identities.map(\.stream).contains($0) })
        #expect(after.core.regenerated == 0, "nothing suppressed: nothing of the new run was published")
        #expect(after.segments == [PoseSegment(stream: Self.poseStream, first: 150)])
        // The new run is a fresh analysis of poses 150... numbered from 0 on its own streams.
        var fresh = try Worker(identities: Self.identities, segments: nil)
        try fresh.live(poses, 150..<poses.count)
        #expect(
            after.published.map { [$0.topic, "\($0.sequence)", $0.json] }
                == fresh.published.map { [$0.topic, "\($0.sequence)", $0.json] })
        #expect(after.published.allSatisfy { Set(after.newRuns.values).contains($0.stream) })
    }

    /// The ingest that fed the sessions is gone with its journal's stream (a finite source that
    /// ended; a new ingest publishes a new stream): the replay server does not know the stream.
    /// The restarted worker starts a new run at the new stream's first pose.
    @Test func aRestartedWorkerWhoseSourceEndedStartsANewRunAtTheNextStream() throws {
        let poses = try Self.poses()
        var before = try Worker(identities: Self.identities, segments: nil)
        try before.live(poses, 0..<300)
        var after = try Worker(identities: before.identitiesAfterRestart, segments: before.segments)
        // No server has the old stream; a new ingest's poses arrive live on a new stream.
        let refused = after.requests
        after.requests = []
        for request in refused {
            after.fail(request, first: nil)
        }
        try after.live(poses, 300..<poses.count, stream: StreamID(0xCB))
        #expect(after.core.runsRestarted == 2)
        #expect(after.core.regenerated == 0)
        #expect(after.published.contains { $0.topic.hasPrefix("event/") })
        #expect(after.published.allSatisfy { Set(after.newRuns.values).contains($0.stream) })
        #expect(after.published.first?.sequence == 0)
    }

    /// A worker restarted from a checkpoint rebuilds from the checkpoint's pose, not from the
    /// first one, and publishes exactly what one run without a fault publishes: recovery does
    /// not depend on the session's length. Checkpoints taken all along the session, each
    /// through its encoding (bit for bit), and the kill at several points after each.
    @Test func aWorkerRestartedFromACheckpointRebuildsFromItAndPublishesTheSame() throws {
        let poses = try Self.poses()
        let reference = try Self.reference(poses)
        for taken in stride(from: 37, to: poses.count - 40, by: 97) {
            var before = try Worker(identities: Self.identities, segments: nil)
            try before.live(poses, 0..<taken)
            let checkpoint = try #require(before.core.checkpoint(camera: "cam0"))
            let decoded = try CheckpointCodec.decode(
                WorkerCore.CameraCheckpoint.self, from: try CheckpointCodec.encode(checkpoint))
            #expect(decoded == checkpoint)
            let kill = min(poses.count, taken + 25)
            try before.live(poses, taken..<kill)
            var after = try Worker(identities: before.identitiesAfterRestart, segments: before.segments) {
                try $0.restore(decoded)
            }
            #expect(
                after.requests == [
                    PoseReplayRequest(stream: Self.poseStream, from: UInt64(taken), waitsForServer: true)
                ])
            after.serveReplay(poses, held: kill)
            try after.live(poses, kill..<poses.count)
            #expect(before.published + after.published == reference, "checkpoint at pose \(taken)")
            #expect(after.core.healthCounters(sequence: SequenceTotals())["posesReplayed"] == kill - taken)
        }
    }

    /// A checkpoint of other sessions (another stream: a new run since) is refused.
    @Test func aCheckpointOfAnotherStreamIsRefused() throws {
        let poses = try Self.poses()
        var before = try Worker(identities: Self.identities, segments: nil)
        try before.live(poses, 0..<50)
        let checkpoint = try #require(before.core.checkpoint(camera: "cam0"))
        var other = Self.identities
        other[0].stream = StreamID(0x99)
        let specs = try Self.sessions.map { try WorkerSession(spec: $0) }
        var core = try WorkerCore(
            sessions: specs, snapshotRate: 15, identities: other, resume: ["cam0": before.segments])
        #expect(throws: CheckpointError.self) { try core.restore(checkpoint) }
        var version = checkpoint
        version.version = 99
        core = try WorkerCore(
            sessions: specs, snapshotRate: 15, identities: Self.identities, resume: ["cam0": before.segments])
        #expect(throws: CheckpointError.self) { try core.restore(version) }
    }
}
