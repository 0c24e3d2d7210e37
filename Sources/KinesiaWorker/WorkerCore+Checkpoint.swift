import KinesiaAnalytics
public import KinesiaMotion
public import KinesiaWire

extension WorkerCore {
    /// Everything a camera's sessions are, between two poses: each session's analysis state,
    /// stream and next sequence numbers, and the pose history from the next pose on. A worker
    /// restarted from it rebuilds from that pose, not from the first one, and gives the same
    /// events with the same numbers as the run it replaces (the analysis is deterministic, and
    /// every part of its state comes back bit for bit).
    public struct CameraCheckpoint: Codable, Hashable, Sendable {
        /// The encoding's version; another is refused.
        public static let currentVersion = 1
        /// ``currentVersion`` when written.
        public var version: Int
        /// The camera.
        public var camera: String
        /// The camera's sessions, in the worker's order.
        public var sessions: [SessionCheckpoint]
        /// The pose segments from the next pose to analyse on (the first one starts there).
        public var segments: [PoseSegment]
    }

    /// One session of a ``CameraCheckpoint``.
    public struct SessionCheckpoint: Codable, Hashable, Sendable {
        /// The session's name.
        public var name: String
        /// The stream its events and snapshots are published on.
        public var stream: StreamID
        /// The next event sequence number.
        public var nextEvent: UInt64
        /// The next snapshot sequence number.
        public var nextSnapshot: UInt64
        /// A side's analysis, or both sides' analytics.
        var analyzer: MotionAnalyzer.Checkpoint?
        var analytics: MotionAnalytics.Checkpoint?
        var throttle: SnapshotThrottle
    }

    /// The camera's checkpoint now, or `nil` while its feed is not live (replaying, or waiting
    /// for a hole: held poses are not part of the state) or before its first pose.
    public func checkpoint(camera: String) -> CameraCheckpoint? {
        guard let feed = ordered?[camera]?.feed, !feed.isCatchingUp, let position = feed.position,
            let indices = byCamera[camera]
        else { return nil }
        var segment = PoseSegment(stream: position.stream, first: position.next)
        segment.skipped = feed.segments.last?.skipped.filter { $0.upperBound > position.next } ?? []
        return CameraCheckpoint(
            version: CameraCheckpoint.currentVersion, camera: camera,
            sessions: indices.map { index in
                let session = hosted[index]
                return SessionCheckpoint(
                    name: session.spec.name, stream: session.identity.stream, nextEvent: session.nextEvent,
                    nextSnapshot: session.nextSnapshot,
                    analyzer: session.analytics == nil ? session.analyzer.checkpoint : nil,
                    analytics: session.analytics?.checkpoint, throttle: session.throttle)
            },
            segments: [segment])
    }

    /// Restores a camera's sessions from `checkpoint`, before ``start(into:)``: their analysis,
    /// next sequence numbers and pose history. All or nothing.
    /// - Throws: ``CheckpointError`` when it is not this worker's camera as it is now (another
    ///   version, other sessions, another exercise or thresholds, another stream than the
    ///   session's identity: a new run since), or when it is ahead of the journal (it numbered
    ///   events or snapshots the session's journal does not hold).
    public mutating func restore(_ checkpoint: CameraCheckpoint) throws(CheckpointError) {
        guard checkpoint.version == CameraCheckpoint.currentVersion else {
            throw CheckpointError(.unsupportedVersion, detail: "checkpoint version \(checkpoint.version)")
        }
        guard let indices = byCamera[checkpoint.camera], ordered?[checkpoint.camera] != nil,
            indices.count == checkpoint.sessions.count, !checkpoint.segments.isEmpty
        else { throw CheckpointError(.inconsistent, detail: "not the sessions of \(checkpoint.camera)") }
        var restored = hosted
        for (index, saved) in zip(indices, checkpoint.sessions) {
            let spec = hosted[index].spec
            guard saved.name == spec.name, saved.stream == hosted[index].identity.stream else {
                throw CheckpointError(.inconsistent, detail: "session \(spec.name) is on another stream now")
            }
            if spec.analysis == .analytics {
                guard let analytics = saved.analytics else {
                    throw CheckpointError(
                        .inconsistent, detail: "session \(spec.name) has no analytics state")
                }
                restored[index].analytics = try MotionAnalytics(exercise: spec.exercise, restoring: analytics)
            } else {
                guard let analyzer = saved.analyzer else {
                    throw CheckpointError(.inconsistent, detail: "session \(spec.name) has no analysis state")
                }
                restored[index].analyzer = try MotionAnalyzer(
                    exercise: spec.exercise, side: spec.side ?? .left, restoring: analyzer)
            }
            guard saved.throttle.interval == hosted[index].throttle.interval else {
                throw CheckpointError(.inconsistent, detail: "another snapshot rate")
            }
            // What it numbered must be in the journal: a checkpoint ahead of it (written by a
            // holder after another took the journal from it, or kept by a power cut that took the
            // last records) would make the rebuild skip numbers no one can serve.
            let identity = hosted[index].identity
            for (next, last, what) in [
                (saved.nextEvent, identity.lastEvent, "events"),
                (saved.nextSnapshot, identity.lastSnapshot, "snapshots"),
            ] where next > 0 && (last.map { $0 < next - 1 } ?? true) {
                throw CheckpointError(
                    .inconsistent,
                    detail: "session \(spec.name) numbered \(what) up to #\(next - 1), its journal holds "
                        + (last.map { "up to #\($0)" } ?? "none"))
            }
            restored[index].throttle = saved.throttle
            restored[index].nextEvent = saved.nextEvent
            restored[index].nextSnapshot = saved.nextSnapshot
        }
        hosted = restored
        let holeWait = ordered![checkpoint.camera]!.feed.holeWait
        ordered?[checkpoint.camera]?.feed = PoseFeed(segments: checkpoint.segments, holeWait: holeWait)
    }
}
