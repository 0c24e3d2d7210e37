/// Whether the joints an exercise needs are in view, and which are missing.
public struct Visibility: Sendable, Hashable, Codable {
    /// `true` when every required joint is in view.
    public var isVisible: Bool
    /// The required joints that are not in view, in ``Joint`` order.
    public var missingJoints: [Joint]

    /// Creates a visibility value.
    public init(isVisible: Bool, missingJoints: [Joint]) {
        self.isVisible = isVisible
        self.missingJoints = missingJoints
    }
}
