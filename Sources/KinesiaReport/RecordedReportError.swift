/// Why a report of a database could not be made.
public enum RecordedReportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was asked for is not in the database (a run, a patient's runs, a camera, a session).
    case notRecorded(String)
    /// The database could not be read.
    case unreadable(String)

    /// The message, for the user.
    public var description: String {
        switch self {
        case .notRecorded(let message), .unreadable(let message): message
        }
    }
}
