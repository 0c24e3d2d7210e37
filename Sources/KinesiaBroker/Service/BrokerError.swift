public import KinesiaBus
public import KinesiaService
public import KinesiaWire

/// Why a broker cannot serve its bus: another broker holds it, its address is in use, its
/// directory is not private, its forwarding stopped, its own sockets cannot be made. What is
/// wrong, with the path or address and the error underneath.
///
/// ```swift
/// do {
///     try service.run(until: stop)
/// } catch .ownSockets(let bus, let error) {
///     print("the broker of \(bus) cannot make its sockets: \(error)")
/// } catch {
///     print(error)
/// }
/// ```
public enum BrokerError: ServiceError, Hashable, Sendable {
    /// The bus cannot be served (another broker holds it, its address is in use, its directory
    /// is not private, its forwarding stopped): what is wrong, with the path or address.
    case unservable(String)
    /// The broker's own sockets on the bus (named) cannot be made or connected: its context,
    /// the publisher of its health.
    case ownSockets(String, ZMQError)
    /// The process name cannot name a `health/` topic.
    case processName(TopicError)

    /// An error saying `description`: the bus cannot be served (``unservable(_:)``).
    public init(_ description: String) { self = .unservable(description) }

    /// The message.
    public var description: String {
        switch self {
        case .unservable(let text): text
        case .ownSockets(let bus, let error): "the broker's own sockets on \(bus) cannot be made: \(error)"
        case .processName(let error): error.description
        }
    }

    /// A bus that cannot be served is a failure, never the caller's mistake.
    public var isUsageError: Bool { false }
}
