import KinesiaJSON
public import KinesiaService

/// Why a journaling process's state directory, journal or stream identities cannot be used.
public enum PublishJournalError: ServiceError, Hashable, Sendable {
    /// No state directory was given and none can be found (neither `XDG_STATE_HOME` nor `HOME`
    /// is set).
    case noStateDirectory
    /// The state directory given is not an absolute path.
    case relativeStateDirectory(String)
    /// The state directory, a journal or a stream identity cannot be used: what is wrong.
    case unusable(String)

    /// The message.
    public var description: String {
        switch self {
        case .noStateDirectory:
            "no state directory: set HOME or XDG_STATE_HOME, or give --state DIR (or --no-journal)"
        case .relativeStateDirectory(let path):
            "--state must be an absolute path, got \(path.quotedExcerpt())"
        case .unusable(let text): text
        }
    }

    /// A state directory that is missing or relative is the caller's mistake.
    public var isUsageError: Bool {
        switch self {
        case .noStateDirectory, .relativeStateDirectory: true
        case .unusable: false
        }
    }
}
