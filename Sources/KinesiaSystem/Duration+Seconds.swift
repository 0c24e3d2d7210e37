extension Duration {
    /// The duration in seconds, as a `Double`.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// A duration from seconds (negative and non-finite values give zero).
    public static func seconds(double value: Double) -> Duration {
        guard value.isFinite, value > 0 else { return .zero }
        return .nanoseconds(Int64(min(value, 1e9) * 1e9))
    }
}
