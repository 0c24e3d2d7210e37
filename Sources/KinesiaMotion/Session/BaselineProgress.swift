/// Progress of a baseline measurement started with ``MotionSession/startBaseline(reps:)``.
public struct BaselineProgress: Sendable, Hashable, Codable {
    /// Clean reps (or holds) measured so far.
    public var completed: Int
    /// Clean reps (or holds) the baseline needs.
    public var target: Int
    /// The highest peak among the clean reps so far; the baseline once complete.
    public var value: Double?

    /// Whether the baseline has all its reps.
    public var isComplete: Bool { completed >= target }

    /// Creates a progress value.
    public init(completed: Int, target: Int, value: Double?) {
        self.completed = completed
        self.target = target
        self.value = value
    }
}
