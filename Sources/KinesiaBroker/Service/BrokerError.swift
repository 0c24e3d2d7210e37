public import KinesiaService

/// Why a broker cannot serve its bus: another broker holds it, its address is in use, its
/// directory is not private, its forwarding stopped. What is wrong, with the path or address.
public struct BrokerError: ServiceError, Hashable, Sendable {
    /// The message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }

    /// A bus that cannot be served is a failure, never the caller's mistake.
    public var isUsageError: Bool { false }
}
