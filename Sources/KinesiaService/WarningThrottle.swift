/// Which warnings of a stream of many are shown: every one is counted, by reason; the first
/// ``first`` of each reason are shown, then every ``every``th. A value with no I/O.
///
/// A hostile or broken peer can make a consumer warn at the rate it sends (a gap before every
/// message, a replay server that answers with damage): shown one by one, the warnings flood the
/// log and the terminal. Throttled per reason, one kind of trouble never hides another's first
/// lines, and the counts say how many there were.
///
/// ```swift
/// var warnings = WarningThrottle()
/// if let line = warnings.admit("lost", "event/cam0/left/: #4..<#9 cannot be had any more") {
///     log.warning(line)   // "... (1 of this kind so far)"
/// }
/// ```
public struct WarningThrottle: Hashable, Sendable {
    /// Warnings of a reason shown before throttling starts.
    public var first = 10
    /// After ``first``, every this-many-th of a reason is shown.
    public var every = 1000
    /// How many warnings of each reason were given (shown or not).
    public private(set) var counts: [String: Int] = [:]

    /// A throttle that has seen no warning.
    public init(first: Int = 10, every: Int = 1000) {
        self.first = first
        self.every = every
    }

    /// Counts a warning of `reason`.
    /// - Returns: `message` with how many of its reason there were so far, when it is to be
    ///   shown; `nil` when it is throttled.
    public mutating func admit(_ reason: String, _ message: @autoclosure () -> String) -> String? {
        let seen = counts[reason, default: 0] &+ 1
        counts[reason] = seen
        guard seen <= first || seen % every == 0 else { return nil }
        return message() + " (\(seen) of this kind so far)"
    }

    /// How many warnings were throttled (counted, not shown), over every reason.
    public var hidden: Int {
        counts.values.reduce(0) { total, seen in
            let shown = min(seen, first) + max(0, seen / every - first / every)
            return total &+ (seen - shown)
        }
    }

    /// `reason=count` for every reason, sorted: for a closing log line.
    public var summary: String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}
