import KinesiaWire

/// The one rule for the names of the control plane (pools, workers, request ids, patient
/// references): the bus's names (``Topic/isValidName(_:)``), so they can be topics, file
/// names and log words as they are.
public enum ControlNames {
    /// Whether `name` is 1 to 64 letters, digits, `.`, `_` or `-`, not only dots.
    public static func isValid(_ name: String) -> Bool { Topic.isValidName(name) }

    /// The message for a `name` that is not valid, naming its `role`.
    public static func message(_ name: String, role: String) -> String {
        Topic.invalidNameMessage(name, role: role)
    }
}
