public import KinesiaMotion

/// One finding of ``MotionAnalytics``: what the analytics session publishes on
/// `event/<camera>/<session>/`, one JSON line each (``AnalyticsJSON``).
public enum AnalyticsRecord: Sendable, Hashable {
    /// A judged rep's tempo and range (after every clean or rejected rep).
    case repTempo(RepTempo)
    /// The left and right reps of one pair compared (after the second rep of a pair).
    case repSymmetry(RepSymmetry)
    /// A side's figures across the set so far (after each of its reps), or for the whole set
    /// once it ends (``SetSummary/isComplete``).
    case setSummary(SetSummary)

    /// The JSON `"type"`: `"repTempo"`, `"repSymmetry"` or `"setSummary"`.
    public var name: String {
        switch self {
        case .repTempo: "repTempo"
        case .repSymmetry: "repSymmetry"
        case .setSummary: "setSummary"
        }
    }

    /// Every `"type"` an analytics record can have.
    public static let names: Set<String> = ["repTempo", "repSymmetry", "setSummary"]
}

/// The tempo and range of one judged rep (or hold), from the smoothed primary measure of the
/// poses between its start and its end.
///
/// The rep is split in three phases by the *top band*, the values at or above
/// `peak - topBand * range` (``AnalyticsRules/topBand``): ``timeUp`` from the start to the first
/// pose in the band, ``timeAtTop`` from there to the last pose in the band, ``timeDown`` from
/// there to the end. ``timeUnderTension`` is the whole rep: the three added up.
public struct RepTempo: Sendable, Hashable {
    /// The side of the body.
    public var side: BodySide
    /// The rep's number on its side, from 1, clean and rejected reps alike.
    public var number: Int
    /// The set it belongs to, from 1.
    public var set: Int
    /// The rep's form faults, in order; empty when clean.
    public var faults: [FormFeedback]
    /// The highest smoothed value of the rep, in degrees (``Rep/peak``).
    public var peak: Double
    /// The lowest smoothed value since the previous rep of the side ended (the rest before this
    /// one), in degrees.
    public var low: Double
    /// When the rep started (``Rep/start``).
    public var start: Double
    /// The first pose at the peak.
    public var peakTime: Double
    /// When the rep ended (``Rep/end``).
    public var end: Double
    /// Seconds from the start to the top band.
    public var timeUp: Double
    /// Seconds in the top band.
    public var timeAtTop: Double
    /// Seconds from the top band to the end.
    public var timeDown: Double

    /// Whether the rep had no fault.
    public var isClean: Bool { faults.isEmpty }
    /// The range of motion: ``peak`` minus ``low``.
    public var range: Double { peak - low }
    /// Seconds from the start to the end.
    public var timeUnderTension: Double { end - start }

    /// Makes a rep's tempo.
    public init(
        side: BodySide, number: Int, set: Int, faults: [FormFeedback], peak: Double, low: Double,
        start: Double, peakTime: Double, end: Double, timeUp: Double, timeAtTop: Double, timeDown: Double
    ) {
        self.side = side
        self.number = number
        self.set = set
        self.faults = faults
        self.peak = peak
        self.low = low
        self.start = start
        self.peakTime = peakTime
        self.end = end
        self.timeUp = timeUp
        self.timeAtTop = timeAtTop
        self.timeDown = timeDown
    }
}

/// The left and right reps of one pair compared: the n-th rep of the left side with the n-th
/// rep of the right side within a set.
public struct RepSymmetry: Sendable, Hashable {
    /// One side's rep, as the comparison uses it.
    public struct Side: Sendable, Hashable {
        /// The rep's number on its side (``RepTempo/number``).
        public var number: Int
        /// Its peak, in degrees.
        public var peak: Double
        /// Its range, in degrees.
        public var range: Double
        /// Its time under tension, in seconds.
        public var timeUnderTension: Double

        /// Makes one side of a pair.
        public init(number: Int, peak: Double, range: Double, timeUnderTension: Double) {
            self.number = number
            self.peak = peak
            self.range = range
            self.timeUnderTension = timeUnderTension
        }

        /// The side of a rep's tempo.
        public init(_ tempo: RepTempo) {
            self.init(
                number: tempo.number, peak: tempo.peak, range: tempo.range,
                timeUnderTension: tempo.timeUnderTension)
        }
    }

    /// The set, from 1.
    public var set: Int
    /// The pair's number in its set, from 1.
    public var pair: Int
    /// The left rep.
    public var left: Side
    /// The right rep.
    public var right: Side

    /// Left peak minus right peak, in degrees.
    public var peakDifference: Double { left.peak - right.peak }
    /// The smaller range over the larger (1 is symmetric); `nil` when both are 0 or less.
    public var rangeRatio: Double? { Self.ratio(left.range, right.range) }
    /// The shorter time under tension over the longer (1 is symmetric); `nil` when both are 0.
    public var tempoRatio: Double? { Self.ratio(left.timeUnderTension, right.timeUnderTension) }

    /// Makes a pair.
    public init(set: Int, pair: Int, left: Side, right: Side) {
        self.set = set
        self.pair = pair
        self.left = left
        self.right = right
    }

    private static func ratio(_ a: Double, _ b: Double) -> Double? {
        let larger = max(a, b)
        guard larger > 0 else { return nil }
        return max(0, min(a, b)) / larger
    }
}

/// One side's figures across a set.
public struct SetSummary: Sendable, Hashable {
    /// The side.
    public var side: BodySide
    /// The set, from 1.
    public var set: Int
    /// Whether the set is over (a pause of ``AnalyticsRules/setBreak``, or the end of input);
    /// `false` for the running figures after each rep.
    public var isComplete: Bool
    /// The set's reps, clean and rejected.
    public var reps: Int
    /// Clean reps.
    public var clean: Int
    /// Rejected reps, by fault (a rep with two faults counts for both).
    public var rejectedByFault: [FormFeedback: Int]
    /// The peak of the set's first rep.
    public var firstPeak: Double
    /// The peak of the set's last rep.
    public var lastPeak: Double
    /// The trend of the peaks, in degrees per rep: the least-squares slope of the peak against
    /// the rep's number in the set (``PeakTrend``). Negative when the range shrinks as the
    /// patient tires; `nil` under two reps.
    public var peakSlope: Double?
    /// The mean peak of the clean reps; `nil` without one.
    public var meanCleanPeak: Double?
    /// The side's baseline once measured (the highest peak of the first clean reps of the
    /// session, ``AnalyticsRules/baselineReps``); `nil` before.
    public var baseline: Double?

    /// Rejected reps.
    public var rejected: Int { reps - clean }
    /// The share of the set's reps that were rejected (0 without reps).
    public var rejectedShare: Double { reps > 0 ? Double(rejected) / Double(reps) : 0 }

    /// The share of the set's reps rejected with `fault` (0 without reps).
    public func rejectedShare(for fault: FormFeedback) -> Double {
        reps > 0 ? Double(rejectedByFault[fault, default: 0]) / Double(reps) : 0
    }

    /// ``meanCleanPeak`` minus ``baseline``, in degrees; `nil` without both.
    public var progress: Double? {
        guard let meanCleanPeak, let baseline else { return nil }
        return meanCleanPeak - baseline
    }

    /// ``progress`` as a percentage of ``baseline``; `nil` without it or with a baseline of 0.
    public var progressPercent: Double? {
        guard let progress, let baseline, baseline != 0 else { return nil }
        return 100 * progress / baseline
    }

    /// Makes a set summary.
    public init(
        side: BodySide, set: Int, isComplete: Bool, reps: Int, clean: Int,
        rejectedByFault: [FormFeedback: Int], firstPeak: Double, lastPeak: Double, peakSlope: Double?,
        meanCleanPeak: Double?, baseline: Double?
    ) {
        self.side = side
        self.set = set
        self.isComplete = isComplete
        self.reps = reps
        self.clean = clean
        self.rejectedByFault = rejectedByFault
        self.firstPeak = firstPeak
        self.lastPeak = lastPeak
        self.peakSlope = peakSlope
        self.meanCleanPeak = meanCleanPeak
        self.baseline = baseline
    }
}

/// The least-squares line of peaks against rep numbers 1, 2, 3..., kept as running sums.
///
/// ```swift
/// var trend = PeakTrend()
/// for peak in [100.0, 98, 96] { trend.add(peak) }
/// trend.slope   // -2.0
/// ```
public struct PeakTrend: Sendable, Hashable {
    /// Peaks added.
    public internal(set) var count = 0
    var sumY = 0.0
    var sumXY = 0.0

    /// An empty trend.
    public init() {}

    /// Adds the next rep's peak.
    public mutating func add(_ peak: Double) {
        count += 1
        sumY += peak
        sumXY += Double(count) * peak
    }

    /// Degrees per rep; `nil` under two peaks.
    public var slope: Double? {
        guard count >= 2 else { return nil }
        let n = Double(count)
        // x = 1...n: sum x = n(n+1)/2, sum x^2 = n(n+1)(2n+1)/6.
        let sumX = n * (n + 1) / 2
        let sumXX = n * (n + 1) * (2 * n + 1) / 6
        return (n * sumXY - sumX * sumY) / (n * sumXX - sumX * sumX)
    }
}

/// The thresholds of ``MotionAnalytics``.
public struct AnalyticsRules: Sendable, Hashable {
    /// The top band of a rep, as a fraction of its range below its peak (0.1: the values within
    /// 10% of the range of the peak are "at the top").
    public var topBand = 0.1
    /// Seconds of pose time with no rep ended on either side that end a set.
    public var setBreak = 20.0
    /// Clean reps of each side's baseline, measured from the start of the session; `nil` for the
    /// exercise's ``SessionRules/baselineReps``.
    public var baselineReps: Int?

    /// The default rules.
    public init() {}
}
