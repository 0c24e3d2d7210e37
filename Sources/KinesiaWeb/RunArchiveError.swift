public import KinesiaReport
public import KinesiaStore

/// Why the runs of a record database (``RunArchive``) cannot be read.
///
/// ```swift
/// do {
///     print(try archive.runsJSON(patient: nil))
/// } catch .database(let error) {
///     print("\(archive.path): \(error)")
/// } catch {
///     print(error)
/// }
/// ```
public enum RunArchiveError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database cannot be opened or read.
    case database(SQLiteError)
    /// A run's report cannot be made of what the database holds.
    case report(RecordedReportError)

    /// What failed, for the user (the caller names the database).
    public var description: String {
        switch self {
        case .database(let error): error.description
        case .report(let error): error.description
        }
    }
}
