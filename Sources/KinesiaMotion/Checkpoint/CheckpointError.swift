/// Why a checkpoint could not be encoded, read back or restored.
///
/// Restoring never trusts a checkpoint that does not fit: one of another exercise, another side,
/// changed thresholds or another format version is refused with this error, and so is an
/// encoding that is torn or corrupt. The analysis is then rebuilt another way (an older
/// checkpoint, or the poses from the first one).
///
/// ```swift
/// do {
///     analyzer = try MotionAnalyzer(exercise: .squat, side: .left, restoring: checkpoint)
/// } catch where error.kind == .otherThresholds {
///     // The exercise's thresholds changed since the checkpoint: replay from the first pose.
/// }
/// ```
public struct CheckpointError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem.
    public enum Kind: String, Hashable, Sendable {
        /// The bytes are not a checkpoint of the expected type (torn, truncated, corrupt).
        case unreadable
        /// A value could not be encoded.
        case unencodable
        /// The checkpoint's format version is not this build's.
        case unsupportedVersion
        /// The checkpoint is of another exercise.
        case otherExercise
        /// The checkpoint is of another side of the body.
        case otherSide
        /// The checkpoint is of the same exercise with other thresholds or rules.
        case otherThresholds
        /// The checkpoint reads back but its content cannot belong to this analysis (a count or
        /// a mask out of range): it was not written by this code.
        case inconsistent
    }

    /// The kind of problem.
    public var kind: Kind
    /// What was wrong, for a person to read.
    public var detail: String

    /// Creates an error.
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - detail: What was wrong, for a person to read.
    public init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The detail.
    public var description: String { detail }
}
