public import KinesiaBus
public import KinesiaService
public import KinesiaStore
public import KinesiaSystem
public import KinesiaWire

/// Why a coordinator (``CoordinatorService``) cannot run: its state directory, its database,
/// its control endpoint or the bus, with the error underneath.
///
/// ```swift
/// do {
///     try service.run(until: stop)
/// } catch .controlEndpoint(let endpoint, _) {
///     print("another coordinator holds \(endpoint)")
/// } catch {
///     print(error)
/// }
/// ```
public enum CoordinatorError: ServiceError, Hashable, Sendable {
    /// The bus (named) is a TCP bus and no key was given (nor `--insecure`).
    case insecureTCP(String)
    /// The state directory cannot be used (a link, another owner, not private...).
    case stateDirectory(PrivateDirectoryError)
    /// The database (its path) cannot be opened or read.
    case database(String, SQLiteError)
    /// The control socket's authentication (ZAP) cannot start.
    case authentication(ZMQError)
    /// The control endpoint (named) cannot be bound: another coordinator holds it.
    case controlEndpoint(String, ZMQError)
    /// The bus (named) failed: its sockets could not be made, connected or used.
    case bus(String, ZMQError)
    /// The process name cannot name a `health/` topic.
    case processName(TopicError)

    /// What is wrong, for the user.
    public var description: String {
        switch self {
        case .insecureTCP(let bus):
            "a coordinator on the TCP bus \(bus) needs the broker's key and allowed keys (or --insecure)"
        case .stateDirectory(let error): "state directory: \(error)"
        case .database(let path, let error): "\(path): \(error)"
        case .authentication(let error): "cannot start the control socket's authentication: \(error.message)"
        case .controlEndpoint(let endpoint, let error):
            "cannot bind \(endpoint): \(error) (is another coordinator running?)"
        case .bus(let bus, let error): "the bus \(bus) failed: \(error)"
        case .processName(let error): error.description
        }
    }

    /// Never the caller's mistake: the coordinator cannot run here.
    public var isUsageError: Bool { false }
}
