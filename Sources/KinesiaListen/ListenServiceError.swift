public import KinesiaBus
public import KinesiaService

/// Why a listener (``ListenService``) stopped before its count, its idle time or its stop.
///
/// ```swift
/// do {
///     try service.run(until: stop)
/// } catch .bus(let bus, let error) {
///     print("is the broker of \(bus) running? \(error)")
/// }
/// ```
public enum ListenServiceError: ServiceError, Hashable, Sendable {
    /// The bus (named) failed: its sockets could not be made, connected or used.
    case bus(String, ZMQError)

    /// What failed, for the user.
    public var description: String {
        switch self {
        case .bus(let bus, let error): "the bus \(bus) failed: \(error)"
        }
    }

    /// Never the caller's mistake: a listener's failure exits 1.
    public var isUsageError: Bool { false }
}
