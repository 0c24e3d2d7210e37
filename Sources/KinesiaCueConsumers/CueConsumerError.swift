public import KinesiaService

/// Why a cue consumer (`kinesia voice`, `kinesia haptic`) cannot start or go on.
public enum CueConsumerError: ServiceError, Hashable, Sendable {
    /// A value given cannot be used (a camera or session name): the caller's mistake.
    case usage(String)
    /// Something failed: a file, a lock, the speech engine, the audio player.
    case failure(String)

    /// The message.
    public var description: String {
        switch self {
        case .usage(let text), .failure(let text): text
        }
    }

    /// A value that cannot be used is the caller's mistake.
    public var isUsageError: Bool {
        if case .usage = self { return true }
        return false
    }
}
