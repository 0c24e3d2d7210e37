import CZeroMQ

/// A CURVE key pair as two 40-character Z85 strings (`zmq_curve_keypair`).
///
/// A server keeps its secret key and hands its public key to clients; a client has its own pair
/// and the server's public key:
///
/// ```swift
/// let serverKeys = try CurveKeyPair.generate()
/// try server.makeCurveServer(secretKey: serverKeys.secretKey)
/// try client.makeCurveClient(serverKey: serverKeys.publicKey, keyPair: try .generate())
/// ```
///
/// The ``description`` never shows the secret key.
public struct CurveKeyPair: Hashable, Sendable, CustomStringConvertible {
    /// The public key, Z85 (40 characters).
    public let publicKey: String
    /// The secret key, Z85 (40 characters). Keep it out of logs.
    public let secretKey: String

    /// Generates a fresh key pair.
    ///
    /// - Throws: ``ZMQError/notSupported`` if libzmq was built without CURVE.
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        _ = try zmqCall { zmq_curve_keypair(&publicKey, &secretKey) }
        return CurveKeyPair(uncheckedPublicKey: string(publicKey), secretKey: string(secretKey))
    }

    /// Rebuilds a key pair from its secret key, deriving the public key (`zmq_curve_public`).
    ///
    /// - Throws: ``ZMQError/invalidArgument`` if `secretKey` is not 40 Z85 characters,
    ///   ``ZMQError/notSupported`` without CURVE.
    public init(secretKey: String) throws(ZMQError) {
        guard secretKey.utf8.count == 40, secretKey.utf8.allSatisfy(Self.isZ85) else {
            throw ZMQError.invalidArgument
        }
        var publicKey = [CChar](repeating: 0, count: 41)
        _ = try zmqCall { zmq_curve_public(&publicKey, secretKey) }
        self.init(uncheckedPublicKey: Self.string(publicKey), secretKey: secretKey)
    }

    private init(uncheckedPublicKey publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// `CurveKeyPair(public: <key>, secret: <redacted>)`.
    public var description: String {
        "CurveKeyPair(public: \(publicKey), secret: <redacted>)"
    }

    private static func string(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether a byte is in the Z85 alphabet.
    static func isZ85(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array(".-:+=^!/*?&<>()[]{}@%$#".utf8).contains(byte)
        }
    }
}

extension ZMQSocket {
    /// Makes this socket the CURVE server of its connections: traffic is encrypted and clients
    /// must know the matching public key. Call before bind or connect.
    ///
    /// - Parameter secretKey: The server's secret key (Z85).
    /// - Throws: ``ZMQError/invalidArgument`` for a malformed key.
    public func makeCurveServer(secretKey: String) throws(ZMQError) {
        try set(.curveServer, true)
        try set(.curveSecretKey, secretKey)
    }

    /// Makes this socket a CURVE client of a server whose public key is `serverKey`. Call before
    /// connect. With a wrong server key the handshake fails and nothing is delivered.
    ///
    /// - Parameters:
    ///   - serverKey: The server's public key (Z85).
    ///   - keyPair: This client's long-term key pair.
    /// - Throws: ``ZMQError/invalidArgument`` for a malformed key.
    public func makeCurveClient(serverKey: String, keyPair: CurveKeyPair) throws(ZMQError) {
        try set(.curveServerKey, serverKey)
        try set(.curvePublicKey, keyPair.publicKey)
        try set(.curveSecretKey, keyPair.secretKey)
    }
}
