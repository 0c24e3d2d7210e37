public import KinesiaMotion

/// The analytics of one camera's patient: both sides of one exercise, analysed together, turned
/// into tempo, symmetry and set figures. A value type with no I/O.
///
/// `MotionAnalytics` runs a ``MotionAnalyzer`` for each side on the same poses (a baseline of
/// ``AnalyticsRules/baselineReps`` clean reps started on each at the beginning), follows each
/// side's smoothed primary measure, and answers every pose with ``AnalyticsRecord``s:
///
/// - after each judged rep (clean or rejected), its ``RepTempo``: time up, at the top, down,
///   under tension, and the range from the rest before it;
/// - when a rep completes a left-right pair (the n-th left rep and the n-th right rep of a set),
///   their ``RepSymmetry``;
/// - after each rep, its side's running ``SetSummary`` (trend of the peaks, share of rejected
///   reps by fault, progress against the baseline); when the set ends, each side's final one
///   (``SetSummary/isComplete``).
///
/// A set ends when no rep ended on either side for ``AnalyticsRules/setBreak`` seconds of pose
/// time (at the first pose after that), or at ``finish()``; the next rep starts the next set.
/// Time comes only from ``Pose/timestamp``: the same poses always give the same records.
///
/// ```swift
/// var analytics = MotionAnalytics(exercise: .squat)
/// for pose in poses {
///     for record in analytics.process(pose) { print(AnalyticsJSON.encode(record, at: pose.timestamp)) }
/// }
/// let last = analytics.finish()   // the final set summaries
/// ```
public struct MotionAnalytics: Sendable {
    /// One pose's smoothed value.
    struct Sample: Sendable {
        var t: Double
        var value: Double
    }

    /// What is kept for one side.
    struct Side: Sendable {
        var analyzer: MotionAnalyzer
        /// The smoothed values since the side's last judged rep (the oldest trimmed when they
        /// cannot belong to a rep any more).
        var samples: [Sample] = []
        /// The lowest smoothed value since the side's last judged rep.
        var low: Double?
        /// Judged reps so far.
        var judged = 0
    }

    /// One side's tally in the current set.
    struct Tally: Sendable {
        var reps = 0
        var clean = 0
        var cleanPeakSum = 0.0
        var rejectedByFault: [FormFeedback: Int] = [:]
        var firstPeak = 0.0
        var lastPeak = 0.0
        var trend = PeakTrend()
        /// This set's reps not yet paired with the other side's.
        var unpaired: [RepTempo] = []
    }

    /// The exercise.
    public let exercise: Exercise
    /// The thresholds.
    public let rules: AnalyticsRules
    /// The set under way (or the next one, when none is under way), from 1.
    public internal(set) var setNumber = 1
    /// Pairs completed in the set under way.
    public internal(set) var pairs = 0

    var left: Side
    var right: Side
    var tallies: (left: Tally, right: Tally) = (Tally(), Tally())
    /// When the last rep of the set under way ended (either side); `nil` when no set is under way
    /// or the time base started over since.
    var lastRepEnd: Double?
    /// How long a rep can last: samples older than this before the latest are no rep's.
    private let window: Double

    /// Analytics of `exercise` on both sides.
    /// - Parameters:
    ///   - exercise: The exercise, with its thresholds.
    ///   - rules: The analytics' own thresholds.
    public init(exercise: Exercise, rules: AnalyticsRules = AnalyticsRules()) {
        self.exercise = exercise
        self.rules = rules
        var leftAnalyzer = MotionAnalyzer(exercise: exercise, side: .left)
        var rightAnalyzer = MotionAnalyzer(exercise: exercise, side: .right)
        let baselineReps = max(1, rules.baselineReps ?? exercise.sessionRules.baselineReps)
        leftAnalyzer.startBaseline(reps: baselineReps)
        rightAnalyzer.startBaseline(reps: baselineReps)
        left = Side(analyzer: leftAnalyzer)
        right = Side(analyzer: rightAnalyzer)
        window = exercise.sessionRules.maximumRepDuration + 1
    }

    /// The analyzer of `side` (its snapshot, its rejected poses).
    public func analyzer(_ side: BodySide) -> MotionAnalyzer {
        side == .left ? left.analyzer : right.analyzer
    }

    /// The latest pose time either side accepted.
    public var lastAcceptedTime: Double? {
        switch (left.analyzer.lastAcceptedTime, right.analyzer.lastAcceptedTime) {
        case (let a?, let b?): max(a, b)
        case (let a?, nil): a
        case (nil, let b): b
        }
    }

    /// Analyses one pose on both sides and returns what it completed, in order: a set that a
    /// pause ended, then the left side's reps, then the right side's.
    public mutating func process(_ pose: Pose) -> [AnalyticsRecord] {
        process(FlatPose(pose))
    }

    /// Analyses one pose already in flat form; see ``process(_:)-(Pose)``.
    public mutating func process(_ pose: FlatPose) -> [AnalyticsRecord] {
        let leftEvents = Self.analyze(pose, &left, window: window)
        let rightEvents = Self.analyze(pose, &right, window: window)
        var records: [AnalyticsRecord] = []
        if let lastRepEnd, let now = lastAcceptedTime, now - lastRepEnd > rules.setBreak {
            closeSet(into: &records)
        }
        judge(leftEvents, side: .left, into: &records)
        judge(rightEvents, side: .right, into: &records)
        return records
    }

    /// Ends the input: a pose held by an analyzer is dropped, and the set under way ends, with
    /// each side's final ``SetSummary``.
    public mutating func finish() -> [AnalyticsRecord] {
        left.analyzer.finish()
        right.analyzer.finish()
        var records: [AnalyticsRecord] = []
        closeSet(into: &records)
        return records
    }

    /// Starts both sides' time base over, keeping counts, the baseline and the set figures (see
    /// ``MotionAnalyzer/restartTimeBase()``); a rep under way is dropped, and the set under way
    /// goes on.
    public mutating func restartTimeBase() {
        for side in [BodySide.left, .right] {
            modify(side) { state in
                state.analyzer.restartTimeBase()
                state.samples.removeAll()
                state.low = nil
            }
        }
        lastRepEnd = nil
    }

    // MARK: Steps

    /// Runs one side's analyzer on the pose and records its smoothed value.
    private static func analyze(_ pose: FlatPose, _ side: inout Side, window: Double) -> [MotionEvent] {
        let before = side.analyzer.lastAcceptedTime
        let events = side.analyzer.process(pose)
        guard let time = side.analyzer.lastAcceptedTime, time != before else { return events }
        if let value = side.analyzer.snapshot.value {
            side.samples.append(Sample(t: time, value: value))
            side.low = min(side.low ?? value, value)
        }
        if side.samples.count >= 4096, let first = side.samples.first, first.t < time - window {
            side.samples.removeAll { $0.t < time - window }
        }
        return events
    }

    private mutating func judge(
        _ events: [MotionEvent], side: BodySide, into records: inout [AnalyticsRecord]
    ) {
        for event in events {
            switch event {
            case .repCompleted(let rep), .repRejected(let rep):
                let rules = rules
                let set = setNumber
                let tempo = modify(side) { state in Self.tempo(of: rep, state: &state, set: set, rules: rules)
                }
                record(tempo, into: &records)
            default:
                continue
            }
        }
    }

    /// The tempo of `rep` from the side's samples; the side starts over for the next rep.
    private static func tempo(of rep: Rep, state: inout Side, set: Int, rules: AnalyticsRules) -> RepTempo {
        state.judged += 1
        let inRep = state.samples.filter { $0.t >= rep.start && $0.t <= rep.end }
        let low = min(state.low ?? rep.peak, rep.peak)
        let band = rep.peak - rules.topBand * (rep.peak - low)
        let peakTime = inRep.first { $0.value >= rep.peak }?.t ?? rep.end
        let topStart = inRep.first { $0.value >= band }?.t ?? peakTime
        let topEnd = inRep.last { $0.value >= band }?.t ?? peakTime
        state.samples.removeAll(keepingCapacity: true)
        state.low = nil
        return RepTempo(
            side: state.analyzer.side, number: state.judged, set: set, faults: rep.faults, peak: rep.peak,
            low: low, start: rep.start, peakTime: peakTime, end: rep.end, timeUp: topStart - rep.start,
            timeAtTop: topEnd - topStart, timeDown: rep.end - topEnd)
    }

    /// Adds a rep to its set: its tempo, the pair it completes, its side's running summary.
    private mutating func record(_ tempo: RepTempo, into records: inout [AnalyticsRecord]) {
        records.append(.repTempo(tempo))
        lastRepEnd = max(lastRepEnd ?? tempo.end, tempo.end)
        var tally = tallies(tempo.side)
        tally.reps += 1
        if tally.reps == 1 { tally.firstPeak = tempo.peak }
        tally.lastPeak = tempo.peak
        tally.trend.add(tempo.peak)
        if tempo.isClean {
            tally.clean += 1
            tally.cleanPeakSum += tempo.peak
        } else {
            for fault in Set(tempo.faults) { tally.rejectedByFault[fault, default: 0] += 1 }
        }
        var other = tallies(tempo.side.opposite)
        if other.unpaired.isEmpty {
            tally.unpaired.append(tempo)
        } else {
            let partner = other.unpaired.removeFirst()
            pairs += 1
            let (l, r) = tempo.side == .left ? (tempo, partner) : (partner, tempo)
            records.append(
                .repSymmetry(
                    RepSymmetry(
                        set: setNumber, pair: pairs, left: RepSymmetry.Side(l), right: RepSymmetry.Side(r))))
        }
        setTallies(tempo.side, tally)
        setTallies(tempo.side.opposite, other)
        records.append(.setSummary(summary(tempo.side, complete: false)))
    }

    /// Ends the set under way, if any: each side with reps gets its final summary.
    private mutating func closeSet(into records: inout [AnalyticsRecord]) {
        guard tallies.left.reps + tallies.right.reps > 0 else { return }
        for side in [BodySide.left, .right] where tallies(side).reps > 0 {
            records.append(.setSummary(summary(side, complete: true)))
        }
        tallies = (Tally(), Tally())
        lastRepEnd = nil
        pairs = 0
        setNumber += 1
    }

    private func summary(_ side: BodySide, complete: Bool) -> SetSummary {
        let tally = tallies(side)
        let baseline = analyzer(side).snapshot.baseline.flatMap { $0.isComplete ? $0.value : nil }
        return SetSummary(
            side: side, set: setNumber, isComplete: complete, reps: tally.reps, clean: tally.clean,
            rejectedByFault: tally.rejectedByFault, firstPeak: tally.firstPeak, lastPeak: tally.lastPeak,
            peakSlope: tally.trend.slope,
            meanCleanPeak: tally.clean > 0 ? tally.cleanPeakSum / Double(tally.clean) : nil,
            baseline: baseline)
    }

    private func tallies(_ side: BodySide) -> Tally { side == .left ? tallies.left : tallies.right }

    private mutating func setTallies(_ side: BodySide, _ tally: Tally) {
        if side == .left { tallies.left = tally } else { tallies.right = tally }
    }

    private mutating func modify<Result>(_ side: BodySide, _ body: (inout Side) -> Result) -> Result {
        side == .left ? body(&left) : body(&right)
    }
}
