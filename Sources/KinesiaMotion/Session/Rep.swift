/// One judged repetition (or hold).
public struct Rep: Sendable, Hashable, Codable {
    /// The highest smoothed value of the primary measure during the rep, in degrees.
    public var peak: Double
    /// The form faults that occurred during the rep, in the order they occurred; empty when clean.
    public var faults: [FormFeedback]
    /// Pose timestamp at which the rep started.
    public var start: Double
    /// Pose timestamp at which the rep ended.
    public var end: Double

    /// Whether the rep had no fault.
    public var isClean: Bool { faults.isEmpty }
    /// How long the rep lasted, in seconds.
    public var duration: Double { end - start }

    /// Creates a rep.
    public init(peak: Double, faults: [FormFeedback], start: Double, end: Double) {
        self.peak = peak
        self.faults = faults
        self.start = start
        self.end = end
    }
}
