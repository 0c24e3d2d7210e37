/// The primary measure at one pose: a `"frame"` line of `kinesia analyze --frames`.
///
/// ```json
/// {"type":"frame","t":1.5,"raw":42.3,"value":41.9}
/// ```
public struct MotionFrame: Sendable, Hashable {
    /// The pose timestamp, in seconds.
    public var t: Double
    /// The unsmoothed primary measure, in degrees; `nil` when not measurable.
    public var raw: Double?
    /// The smoothed primary measure (``MotionSnapshot/value``); `nil` when not measurable.
    public var value: Double?

    /// Creates a frame line.
    public init(t: Double, raw: Double?, value: Double?) {
        self.t = t
        self.raw = raw
        self.value = value
    }
}
