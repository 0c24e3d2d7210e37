public import KinesiaBus

/// How a client proves itself to the broker of a TCP bus: its own key (CURVE client key pair,
/// with the role the broker's allowed-keys directory gives it) and the broker's public key.
///
/// Set on ``BusAddress/credentials``: every ``BusPublisher`` and ``BusSubscriber`` made for
/// that address then encrypts its connection and authenticates with it. A bus directory (IPC)
/// ignores them: there the broker checks the peer's user id.
///
/// ```swift
/// var bus = try BusAddress(parsing: "tcp://10.0.0.5:5555")
/// bus.credentials = BusCredentials(
///     key: try BusKey.load("/etc/kinesia/keys/ward-tablet.key", role: .consumer),
///     serverKey: try BusPublicKey.load("/etc/kinesia/keys/broker.pub", role: .broker))
/// ```
public struct BusCredentials: Hashable, Sendable, CustomStringConvertible {
    /// This process's key.
    public var key: BusKey
    /// The broker's public key.
    public var serverKey: BusPublicKey

    /// Makes credentials.
    public init(key: BusKey, serverKey: BusPublicKey) {
        self.key = key
        self.serverKey = serverKey
    }

    /// `key NAME (ROLE), broker NAME`: never the secret.
    public var description: String { "key \(key.name) (\(key.role)), broker \(serverKey.name)" }
}

extension ZMQSocket {
    /// Makes this socket a CURVE client of the bus's broker when `bus` is TCP with
    /// ``BusAddress/credentials``; nothing otherwise. Call before connect.
    /// - Throws: ``ZMQError/invalidArgument`` for a malformed key.
    public func secure(for bus: BusAddress) throws(ZMQError) {
        guard case .tcp = bus.kind, let credentials = bus.credentials else { return }
        try makeCurveClient(serverKey: credentials.serverKey.key, keyPair: credentials.key.keyPair)
    }
}
