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
    }

    /// Poses with a NaN or infinite value.
    public var nonFinite: Int
    /// Poses whose timestamp went back or repeated.
    public var timestampNotIncreasing: Int
    /// Poses with coordinates absurdly far outside the image.
    public var absurdCoordinates: Int
    /// Poses with a timestamp beyond ±10^10 seconds.
    public var absurdTimestamp: Int

    /// Creates a set of counts (all zero by default).
    public init(
        nonFinite: Int = 0, timestampNotIncreasing: Int = 0, absurdCoordinates: Int = 0,
        absurdTimestamp: Int = 0
    ) {
        self.nonFinite = nonFinite
        self.timestampNotIncreasing = timestampNotIncreasing
        self.absurdCoordinates = absurdCoordinates
        self.absurdTimestamp = absurdTimestamp
    }

    /// All dropped poses.
    public var total: Int { nonFinite &+ timestampNotIncreasing &+ absurdCoordinates &+ absurdTimestamp }

    /// The count for one reason.
    public subscript(reason: Reason) -> Int {
        switch reason {
        case .nonFinite: nonFinite
        case .timestampNotIncreasing: timestampNotIncreasing
        case .absurdCoordinates: absurdCoordinates
        case .absurdTimestamp: absurdTimestamp
        }
    }

    /// Counts one more dropped pose for `reason` (wrapping, never trapping).
    public mutating func record(_ reason: Reason) {
        switch reason {
        case .nonFinite: nonFinite &+= 1
        case .timestampNotIncreasing: timestampNotIncreasing &+= 1
        case .absurdCoordinates: absurdCoordinates &+= 1
        case .absurdTimestamp: absurdTimestamp &+= 1
        }
    }
}
