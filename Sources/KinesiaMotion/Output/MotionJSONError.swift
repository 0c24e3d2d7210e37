/// Why a line could not be decoded by ``MotionJSON``.
public struct MotionJSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem.
    public enum Kind: String, Hashable, Sendable {
        /// Not valid JSON.
        case invalidJSON
        /// Valid JSON whose `"type"` is not one this version knows.
        case unknownType
        /// A known `"type"` with a missing key, a wrong type or an unknown raw value.
        case invalidRecord
    }

    /// The kind of problem.
    public var kind: Kind
    /// What was wrong, for a person to read.
    public var detail: String

    /// Creates an error.
    public init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The detail.
    public var description: String { detail }
}
