public import KinesiaWire

/// Who a process is on the bus: the bus it runs on, its name on `health/<name>/`, and whether
/// the bus is insecure (TCP without keys), which its health always says. Every bus process's
/// service is configured with one.
///
/// ```swift
/// let identity = BusProcessIdentity(bus: bus, name: "worker-left", insecure: false)
/// var health = try identity.healthPublisher(role: "worker", problems: { log.warning($0) })
/// ```
public struct BusProcessIdentity: Hashable, Sendable {
    /// The bus, made ready, with its credentials.
    public var bus: BusAddress
    /// The process name on `health/<name>/`.
    public var name: String
    /// Whether the bus runs insecure (TCP without keys).
    public var insecure: Bool

    /// An identity.
    public init(bus: BusAddress, name: String, insecure: Bool = false) {
        self.bus = bus
        self.name = name
        self.insecure = insecure
    }

    /// The process's `health/<name>/` publisher (``HealthPublisher/init(process:role:insecure:problems:)``).
    /// - Throws: ``TopicError`` when the name is not a valid topic name.
    public func healthPublisher(role: String, problems: (@Sendable (String) -> Void)? = nil)
        throws(TopicError)
        -> HealthPublisher
    {
        try HealthPublisher(process: name, role: role, insecure: insecure, problems: problems)
    }
}
