public import KinesiaService

/// Why a worker's state files (checkpoints, session starts, replay endpoint hints) cannot be
/// read or written: what is wrong, with the path.
public struct WorkerStateError: ServiceError, Hashable, Sendable {
    /// The message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }

    /// A state file that cannot be used is a failure, never the caller's mistake.
    public var isUsageError: Bool { false }
}
