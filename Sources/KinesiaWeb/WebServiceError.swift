public import KinesiaBus
public import KinesiaService
public import KinesiaWire

/// Why a dashboard server (``WebService``) cannot serve: its tokens' directory, its address,
/// the bus, with the error underneath.
///
/// ```swift
/// do {
///     try service.run(until: stop)
/// } catch .server(let error) {
///     print("choose another --listen: \(error)")
/// } catch {
///     print(error)
/// }
/// ```
public enum WebServiceError: ServiceError, Hashable, Sendable {
    /// The tokens' directory cannot be used.
    case tokens(WebTokenError)
    /// The server cannot listen: an address that is not one, in use, or a certificate and key
    /// that do not go together.
    case server(HTTPServerError)
    /// The bus (named) failed: its sockets could not be made, connected or used.
    case bus(String, ZMQError)
    /// The process name cannot name a `health/` topic.
    case processName(TopicError)

    /// What failed, for the user.
    public var description: String {
        switch self {
        case .tokens(let error): error.description
        case .server(let error): error.description
        case .bus(let bus, let error): "the bus \(bus) failed: \(error)"
        case .processName(let error): error.description
        }
    }

    /// Never the caller's mistake: a server's failure exits 1.
    public var isUsageError: Bool { false }
}
