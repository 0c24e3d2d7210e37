/// An exercise file that cannot be read or is not valid: `FILE:LINE:COLUMN: field: message`.
public struct ExerciseFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, and where.
    public var message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
