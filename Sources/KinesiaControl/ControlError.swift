/// A control message or command that cannot be taken: what is wrong, in words for the person
/// who sent it.
public enum ControlError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A value that is not valid: a name, an exercise, a side, a number (exit code 64 in a
    /// command).
    case invalid(String)
    /// A message that is not a control message of this version: not JSON, an unknown type or
    /// field, a missing field.
    case malformed(String)

    public var description: String {
        switch self {
        case .invalid(let message), .malformed(let message): message
        }
    }
}
