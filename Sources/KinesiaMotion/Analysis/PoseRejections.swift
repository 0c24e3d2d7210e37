/// Counts of the poses an analysis dropped as bad input, per reason.
///
/// A dropped pose leaves the analysis untouched and emits no event; these counts make the
/// drops visible (logs, health topics).
public struct PoseRejections: Sendable, Hashable, Codable {
    /// Why a pose was dropped. Raw values are stable.
    public enum Reason: String, CaseIterable, Sendable, Hashable, Codable {
        /// A NaN or infinite coordinate, timestamp, confidence or image size.
        case nonFinite
        /// A timestamp not after the previous accepted pose's (going back or repeating).
        case timestampNotIncreasing
        /// A coordinate absurdly far outside the image: beyond 10 times the image size, or
        /// beyond a million pixels.
        case absurdCoordinates
        /// A timestamp beyond ±10^10 seconds (about 317 years): not seconds of any clock a
        /// camera or a recording uses (milliseconds or nanoseconds since 1970 are), and too
        /// coarse there for the analysis' timing. Accepting one would make every later pose
        /// "go back in time".
        case absurdTimestamp
        /// A timestamp far ahead of the previous accepted pose's (more than
        /// ``SessionRules/suspectTimeJump``) that the next pose showed to be an outlier: it came
        /// back to the time before the jump. A jump that the next pose confirms (its time goes on
        /// from the jump) is a gap, not an outlier; a jump still unconfirmed when the poses end
        /// (``MotionAnalyzer/finish()``) counts here too.
        case timestampOutlier
    }

    /// Poses with a NaN or infinite value.
    public var nonFinite: Int
    /// Poses whose timestamp went back or repeated.
    public var timestampNotIncreasing: Int
    /// Poses with coordinates absurdly far outside the image.
    public var absurdCoordinates: Int
    /// Poses with a timestamp beyond ±10^10 seconds.
    public var absurdTimestamp: Int
    /// Poses whose timestamp jumped ahead and that later poses showed to be outliers.
    public var timestampOutlier: Int

    /// Creates a set of counts (all zero by default).
    public init(
        nonFinite: Int = 0, timestampNotIncreasing: Int = 0, absurdCoordinates: Int = 0,
        absurdTimestamp: Int = 0, timestampOutlier: Int = 0
    ) {
        self.nonFinite = nonFinite
        self.timestampNotIncreasing = timestampNotIncreasing
        self.absurdCoordinates = absurdCoordinates
        self.absurdTimestamp = absurdTimestamp
        self.timestampOutlier = timestampOutlier
    }

    /// All dropped poses.
    public var total: Int {
        nonFinite &+ timestampNotIncreasing &+ absurdCoordinates &+ absurdTimestamp &+ timestampOutlier
    }

    /// The count for one reason.
    public subscript(reason: Reason) -> Int {
        get {
            switch reason {
            case .nonFinite: nonFinite
            case .timestampNotIncreasing: timestampNotIncreasing
            case .absurdCoordinates: absurdCoordinates
            case .absurdTimestamp: absurdTimestamp
            case .timestampOutlier: timestampOutlier
            }
        }
        set {
            switch reason {
            case .nonFinite: nonFinite = newValue
            case .timestampNotIncreasing: timestampNotIncreasing = newValue
            case .absurdCoordinates: absurdCoordinates = newValue
            case .absurdTimestamp: absurdTimestamp = newValue
            case .timestampOutlier: timestampOutlier = newValue
            }
        }
    }

    /// `"3 poses dropped: 2 timestampNotIncreasing, 1 timestampOutlier"`: the reasons that
    /// count, in declaration order (`"no pose dropped"` when none).
    public var summary: String {
        guard total > 0 else { return "no pose dropped" }
        let reasons = Reason.allCases.filter { self[$0] > 0 }.map { "\(self[$0]) \($0.rawValue)" }
        return "\(total) pose\(total == 1 ? "" : "s") dropped: " + reasons.joined(separator: ", ")
    }

    /// Counts one more dropped pose for `reason` (wrapping, never trapping).
    public mutating func record(_ reason: Reason) {
        switch reason {
        case .nonFinite: nonFinite &+= 1
        case .timestampNotIncreasing: timestampNotIncreasing &+= 1
        case .absurdCoordinates: absurdCoordinates &+= 1
        case .absurdTimestamp: absurdTimestamp &+= 1
        case .timestampOutlier: timestampOutlier &+= 1
        }
    }
}
