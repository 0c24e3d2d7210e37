extension Duration {
    /// The duration in seconds, as a `Double`.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// The duration in seconds with one decimal, for messages ("83.5"; negative gives "0.0"):
    /// without Foundation's formatting.
    public var secondsText: String {
        let tenths = Int((max(0, seconds) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// A duration from seconds (negative and non-finite values give zero).
    public static func seconds(double value: Double) -> Duration {
        guard value.isFinite, value > 0 else { return .zero }
        return .nanoseconds(Int64(min(value, 1e9) * 1e9))
    }

    /// The duration in whole milliseconds, rounded up, within `0...Int32.max` (negative gives 0):
    /// a timeout for `poll(2)` and libzmq's options, never shorter than asked.
    public var millisecondsRoundedUp: Int32 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds >= Int64(Int32.max / 1000) + 1 { return Int32.max }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        return Int32(clamping: seconds * 1000 + (attoseconds + perMillisecond - 1) / perMillisecond)
    }
}
