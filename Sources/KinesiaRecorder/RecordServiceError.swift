public import KinesiaBus
public import KinesiaService
public import KinesiaStore
public import KinesiaWire

/// Why a recorder (``RecordService``) stopped: what failed, with the error underneath.
///
/// ```swift
/// do {
///     try service.run(until: stop)
/// } catch .databaseUnopenable(let path, _) {
///     print("choose another --db than \(path)")
/// } catch {
///     print(error)
/// }
/// ```
public enum RecordServiceError: ServiceError, Hashable, Sendable {
    /// The database file (its path) cannot be opened or made.
    case databaseUnopenable(String, SQLiteError)
    /// The database file (its path) cannot be written (a full disk, a file made read-only).
    case databaseUnwritable(String, SQLiteError)
    /// The bus (named) failed: its sockets could not be made, connected or used.
    case bus(String, ZMQError)
    /// A camera's name cannot name a topic.
    case camera(TopicError)
    /// The process name cannot name a `health/` topic.
    case processName(TopicError)

    /// What failed, for the user.
    public var description: String {
        switch self {
        case .databaseUnopenable(let path, let error): "cannot open the database \(path): \(error)"
        case .databaseUnwritable(let path, let error): "cannot write the database \(path): \(error)"
        case .bus(let bus, let error): "the bus \(bus) failed: \(error)"
        case .camera(let error), .processName(let error): error.description
        }
    }

    /// Never the caller's mistake: the command checked the names it was given (a recorder's
    /// failure exits 1).
    public var isUsageError: Bool { false }
}
