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

    /// A default process name made of `prefix` and a name the user gave (`ingest-<camera>`),
    /// always a valid topic name: when `prefix-subject` is longer than
    /// `Topic.maximumNameLength`, the subject is cut and followed by 8 hexadecimal digits of
    /// its FNV-1a hash, so that two long subjects still give two names, the same at every run.
    ///
    /// ```swift
    /// BusProcessIdentity.derivedName("ingest", "cam0")                             // "ingest-cam0"
    /// BusProcessIdentity.derivedName("ingest", String(repeating: "c", count: 64))  // "ingest-ccc…c-1a2b3c4d" (64 bytes)
    /// ```
    /// - Parameters:
    ///   - prefix: A short valid name (`ingest`, `worker`).
    ///   - subject: A valid name (a camera, a pid).
    public static func derivedName(_ prefix: String, _ subject: String) -> String {
        let whole = "\(prefix)-\(subject)"
        guard whole.utf8.count > Topic.maximumNameLength else { return whole }
        var hash: UInt32 = 0x811C_9DC5
        for byte in subject.utf8 {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        let digits = String(hash, radix: 16)
        let suffix = "-" + String(repeating: "0", count: 8 - digits.count) + digits
        let room = Topic.maximumNameLength - prefix.utf8.count - 1 - suffix.utf8.count
        // Valid names are ASCII: cutting characters cuts bytes.
        return "\(prefix)-\(subject.prefix(room))\(suffix)"
    }
}
