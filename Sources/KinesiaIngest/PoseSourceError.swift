public import KinesiaService

/// Why a pose source (a recording, a simulation, a journal, a video or a camera through the
/// detector) cannot be opened or read.
public enum PoseSourceError: ServiceError, Hashable, Sendable {
    /// The source given cannot be one (a malformed `sim:` spec, a `video:` with no path): the
    /// caller's mistake.
    case usage(String)
    /// The source failed: a missing file, a detector that cannot start or stopped.
    case failure(String)

    /// The message.
    public var description: String {
        switch self {
        case .usage(let text), .failure(let text): text
        }
    }

    /// A source that cannot be one is the caller's mistake.
    public var isUsageError: Bool {
        if case .usage = self { return true }
        return false
    }
}
