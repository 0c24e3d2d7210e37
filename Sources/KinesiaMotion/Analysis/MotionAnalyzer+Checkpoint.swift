extension MotionAnalyzer {
    /// Everything a ``MotionAnalyzer`` has learnt from its poses, to restore it later in another
    /// process: an analyzer restored from the checkpoint taken after a pose gives, for every
    /// later pose, exactly the events and snapshots of the analyzer it was taken from.
    ///
    /// It holds the mutable state only: the snapshot, the rep or hold under way, the form rules'
    /// trackers, the smoothing filter and outlier check, the debouncing of visibility and setup,
    /// a held pose, the rejected poses and the last accepted time. The configuration (the
    /// exercise, its thresholds and the side) is not stored: restoring re-derives it from the
    /// exercise and side it is given, and refuses the checkpoint unless they are the ones it was
    /// taken with (``exercise``, ``side`` and a ``CheckpointFingerprint`` of the thresholds).
    /// The scratch storage of the pose being analysed is not stored either: every pose
    /// overwrites it before it is read.
    ///
    /// Encode it with ``CheckpointCodec``:
    ///
    /// ```swift
    /// let bytes = try CheckpointCodec.encode(analyzer.checkpoint)
    /// // ... in a restarted process:
    /// let checkpoint = try CheckpointCodec.decode(MotionAnalyzer.Checkpoint.self, from: bytes)
    /// var analyzer = try MotionAnalyzer(exercise: .squat, side: .left, restoring: checkpoint)
    /// ```
    public struct Checkpoint: Codable, Hashable, Sendable {
        /// The format version this build writes and reads.
        public static let currentVersion = 1

        /// The checkpoint's format version.
        public internal(set) var version: Int
        /// The ``Exercise/id`` of the exercise it was taken with.
        public internal(set) var exercise: String
        /// The side it was taken with.
        public internal(set) var side: BodySide
        /// The digest of the exercise's thresholds and rules it was taken with.
        public internal(set) var fingerprint: CheckpointFingerprint
        /// The timestamp of the last pose the analysis accepted (``MotionAnalyzer/lastAcceptedTime``).
        public internal(set) var lastAcceptedTime: Double?

        var snapshot: MotionSnapshot.Checkpoint
        var rawValue: Double?
        var rejectedPoses: PoseRejections
        var state: State
        var hasBest: Bool
        var trackers: [FormRuleTracker.Checkpoint]
        var signal: PrimarySignal.Checkpoint
        var heldPose: FlatPose.Checkpoint?
        var visibility: Debouncer
        var setup: Debouncer
    }

    /// The analyzer's state now, for ``init(exercise:side:restoring:)``.
    ///
    /// Taken between two poses (after ``process(_:)-(Pose)`` returned), it includes a pose held
    /// for a time jump; no pose is lost or analysed twice by restoring it.
    public var checkpoint: Checkpoint {
        Checkpoint(
            version: Checkpoint.currentVersion, exercise: exercise.id, side: side,
            fingerprint: CheckpointFingerprint(exercise), lastAcceptedTime: lastAcceptedTime,
            snapshot: snapshot.checkpoint, rawValue: rawValue, rejectedPoses: rejectedPoses, state: state,
            hasBest: hasBest, trackers: trackers.map(\.checkpoint), signal: signal.checkpoint,
            heldPose: heldPose?.checkpoint, visibility: visibility, setup: setup)
    }

    /// Restores an analyzer of `exercise` on `side` from a checkpoint taken with the same
    /// exercise (with the same thresholds) and side.
    ///
    /// The restored analyzer carries on exactly where the checkpointed one was: the next pose
    /// gives the events it would have given.
    ///
    /// ```swift
    /// var analyzer = try MotionAnalyzer(exercise: .squat, side: .left, restoring: checkpoint)
    /// for pose in posesAfterTheCheckpoint { events += analyzer.process(pose) }
    /// ```
    ///
    /// - Parameters:
    ///   - exercise: The exercise, with its thresholds and session rules.
    ///   - side: The side of the body to measure.
    ///   - checkpoint: A checkpoint from ``checkpoint``.
    /// - Throws: ``CheckpointError`` of kind ``CheckpointError/Kind/unsupportedVersion``,
    ///   ``CheckpointError/Kind/otherExercise``, ``CheckpointError/Kind/otherSide`` or
    ///   ``CheckpointError/Kind/otherThresholds`` when the checkpoint does not fit, and
    ///   ``CheckpointError/Kind/inconsistent`` when its content cannot be this exercise's.
    public init(exercise: Exercise, side: BodySide, restoring checkpoint: Checkpoint) throws(CheckpointError)
    {
        try Self.check(checkpoint, exercise: exercise, side: side)
        self.init(exercise: exercise, side: side)
        guard checkpoint.trackers.count == trackers.count else {
            throw CheckpointError(
                .inconsistent,
                detail: "a checkpoint with \(checkpoint.trackers.count) form rules for \(exercise.id), "
                    + "which has \(trackers.count)")
        }
        heldPose = try checkpoint.heldPose.map { pose throws(CheckpointError) in try FlatPose(restoring: pose)
        }
        snapshot = MotionSnapshot(restoring: checkpoint.snapshot)
        rawValue = checkpoint.rawValue
        rejectedPoses = checkpoint.rejectedPoses
        lastAcceptedTime = checkpoint.lastAcceptedTime
        state = checkpoint.state
        hasBest = checkpoint.hasBest
        for index in trackers.indices { trackers[index].restore(checkpoint.trackers[index]) }
        signal.restore(checkpoint.signal)
        visibility = checkpoint.visibility
        setup = checkpoint.setup
    }

    /// Refuses a checkpoint of another version, exercise, threshold set or side.
    private static func check(_ checkpoint: Checkpoint, exercise: Exercise, side: BodySide)
        throws(CheckpointError)
    {
        try CheckpointError.checkFit(
            of: "a checkpoint", version: (checkpoint.version, Checkpoint.currentVersion),
            exercise: (checkpoint.exercise, exercise.id),
            fingerprint: (checkpoint.fingerprint, CheckpointFingerprint(exercise)))
        guard checkpoint.side == side else {
            throw CheckpointError(
                .otherSide,
                detail: "a checkpoint of the \(checkpoint.side.rawValue) side, not the \(side.rawValue)")
        }
    }
}
