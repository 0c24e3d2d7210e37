import KinesiaJSON
public import KinesiaMotion

extension MotionAnalytics {
    /// Everything a ``MotionAnalytics`` has learnt from its poses, to restore it later in another
    /// process: analytics restored from the checkpoint taken after a pose give, for every later
    /// pose, exactly the records of the analytics it was taken from.
    ///
    /// It holds each side's ``MotionAnalyzer/Checkpoint``, the smoothed values since each side's
    /// last rep, the set's tallies (reps, peaks, faults, the peak trend, the reps waiting for
    /// their pair) and the set's number. The configuration (the exercise with its thresholds, the
    /// ``AnalyticsRules``) is not stored: restoring re-derives it and refuses the checkpoint unless
    /// a ``CheckpointFingerprint`` of both matches.
    ///
    /// ```swift
    /// let bytes = try CheckpointCodec.encode(analytics.checkpoint)
    /// let checkpoint = try CheckpointCodec.decode(MotionAnalytics.Checkpoint.self, from: bytes)
    /// var analytics = try MotionAnalytics(exercise: .squat, restoring: checkpoint)
    /// ```
    public struct Checkpoint: Codable, Hashable, Sendable {
        /// The format version this build writes and reads.
        public static let currentVersion = 1

        /// The checkpoint's format version.
        public internal(set) var version: Int
        /// The ``Exercise/id`` of the exercise it was taken with.
        public internal(set) var exercise: String
        /// The digest of the exercise's thresholds and the analytics' rules it was taken with.
        public internal(set) var fingerprint: CheckpointFingerprint

        var setNumber: Int
        var pairs: Int
        var left: Side.Checkpoint
        var right: Side.Checkpoint
        var leftTally: Tally.Checkpoint
        var rightTally: Tally.Checkpoint
        var lastRepEnd: Double?
    }

    /// The analytics' state now, for ``init(exercise:rules:restoring:)``.
    public var checkpoint: Checkpoint {
        Checkpoint(
            version: Checkpoint.currentVersion, exercise: exercise.id,
            fingerprint: Self.fingerprint(exercise, rules), setNumber: setNumber, pairs: pairs,
            left: left.checkpoint, right: right.checkpoint, leftTally: tallies.left.checkpoint,
            rightTally: tallies.right.checkpoint, lastRepEnd: lastRepEnd)
    }

    /// Restores analytics of `exercise` from a checkpoint taken with the same exercise (with the
    /// same thresholds) and the same `rules`.
    ///
    /// The restored analytics carry on exactly where the checkpointed ones were.
    ///
    /// - Parameters:
    ///   - exercise: The exercise, with its thresholds.
    ///   - rules: The analytics' own thresholds.
    ///   - checkpoint: A checkpoint from ``checkpoint``.
    /// - Throws: ``CheckpointError`` of kind ``CheckpointError/Kind/unsupportedVersion``,
    ///   ``CheckpointError/Kind/otherExercise`` or ``CheckpointError/Kind/otherThresholds`` when
    ///   the checkpoint does not fit, and ``CheckpointError/Kind/inconsistent`` when its content
    ///   cannot be this exercise's.
    public init(
        exercise: Exercise, rules: AnalyticsRules = AnalyticsRules(), restoring checkpoint: Checkpoint
    ) throws(CheckpointError) {
        try CheckpointError.checkFit(
            of: "an analytics checkpoint", version: (checkpoint.version, Checkpoint.currentVersion),
            exercise: (checkpoint.exercise, exercise.id),
            fingerprint: (checkpoint.fingerprint, Self.fingerprint(exercise, rules)))
        try Self.checkCounts([checkpoint.setNumber, checkpoint.pairs])
        self.init(exercise: exercise, rules: rules)
        left = try Side(exercise: exercise, side: .left, restoring: checkpoint.left)
        right = try Side(exercise: exercise, side: .right, restoring: checkpoint.right)
        tallies = (try Tally(restoring: checkpoint.leftTally), try Tally(restoring: checkpoint.rightTally))
        setNumber = checkpoint.setNumber
        pairs = checkpoint.pairs
        lastRepEnd = checkpoint.lastRepEnd
    }

    /// Refuses counts no session reaches (negative, or beyond 2^31): a checkpoint with one was
    /// not written by this code, and counting on from it could overflow.
    static func checkCounts(_ counts: [Int]) throws(CheckpointError) {
        guard counts.allSatisfy({ (0...Int(Int32.max)).contains($0) }) else {
            throw CheckpointError(.inconsistent, detail: "an analytics checkpoint with a count out of range")
        }
    }

    /// The digest of the exercise and the analytics' rules.
    static func fingerprint(_ exercise: Exercise, _ rules: AnalyticsRules) -> CheckpointFingerprint {
        var fingerprint = CheckpointFingerprint(exercise)
        fingerprint.combine("analytics")
        fingerprint.combine(rules.topBand)
        fingerprint.combine(rules.setBreak)
        fingerprint.combine(rules.baselineReps == nil ? 0 : 1)
        fingerprint.combine(rules.baselineReps ?? 0)
        return fingerprint
    }
}

extension MotionAnalytics.Side {
    /// One side's state: its analyzer's, and the smoothed values since its last rep (times and
    /// values in two arrays, half the size of an array of pairs).
    struct Checkpoint: Codable, Hashable, Sendable {
        var analyzer: MotionAnalyzer.Checkpoint
        var sampleTimes: [Double]
        var sampleValues: [Double]
        var low: Double?
        var judged: Int
    }

    /// The side's state, as ``init(exercise:side:restoring:)`` takes it back.
    var checkpoint: Checkpoint {
        Checkpoint(
            analyzer: analyzer.checkpoint, sampleTimes: samples.map(\.t), sampleValues: samples.map(\.value),
            low: low, judged: judged)
    }

    /// The side of `checkpoint`.
    init(exercise: Exercise, side: BodySide, restoring checkpoint: Checkpoint) throws(CheckpointError) {
        guard checkpoint.sampleTimes.count == checkpoint.sampleValues.count else {
            throw CheckpointError(
                .inconsistent,
                detail: "an analytics checkpoint with \(checkpoint.sampleTimes.count) sample times and "
                    + "\(checkpoint.sampleValues.count) values")
        }
        try MotionAnalytics.checkCounts([checkpoint.judged])
        self.init(
            analyzer: try MotionAnalyzer(exercise: exercise, side: side, restoring: checkpoint.analyzer))
        samples = zip(checkpoint.sampleTimes, checkpoint.sampleValues).map {
            MotionAnalytics.Sample(t: $0, value: $1)
        }
        low = checkpoint.low
        judged = checkpoint.judged
    }
}

extension MotionAnalytics.Tally {
    /// One side's tally: the faults by raw value (sorted keys, so the same tally is always the
    /// same bytes), the peak trend's sums.
    struct Checkpoint: Codable, Hashable, Sendable {
        var reps: Int
        var clean: Int
        var cleanPeakSum: Double
        var rejectedByFault: [String: Int]
        var firstPeak: Double
        var lastPeak: Double
        var trendCount: Int
        var trendSumY: Double
        var trendSumXY: Double
        var unpaired: [RepTempo.Checkpoint]
    }

    /// The tally, as ``init(restoring:)`` takes it back.
    var checkpoint: Checkpoint {
        Checkpoint(
            reps: reps, clean: clean, cleanPeakSum: cleanPeakSum,
            rejectedByFault: Dictionary(
                uniqueKeysWithValues: rejectedByFault.map { ($0.key.rawValue, $0.value) }),
            firstPeak: firstPeak, lastPeak: lastPeak, trendCount: trend.count, trendSumY: trend.sumY,
            trendSumXY: trend.sumXY, unpaired: unpaired.map(\.checkpoint))
    }

    /// The tally of `checkpoint`.
    init(restoring checkpoint: Checkpoint) throws(CheckpointError) {
        try MotionAnalytics.checkCounts(
            [checkpoint.reps, checkpoint.clean, checkpoint.trendCount] + checkpoint.rejectedByFault.values)
        self.init()
        for (name, count) in checkpoint.rejectedByFault {
            guard let fault = FormFeedback(rawValue: name) else {
                throw CheckpointError(
                    .inconsistent,
                    detail: "an analytics checkpoint with an unknown fault \(name.quotedExcerpt())")
            }
            rejectedByFault[fault] = count
        }
        reps = checkpoint.reps
        clean = checkpoint.clean
        cleanPeakSum = checkpoint.cleanPeakSum
        firstPeak = checkpoint.firstPeak
        lastPeak = checkpoint.lastPeak
        trend.count = checkpoint.trendCount
        trend.sumY = checkpoint.trendSumY
        trend.sumXY = checkpoint.trendSumXY
        unpaired = checkpoint.unpaired.map(RepTempo.init(restoring:))
    }
}
