import Foundation
import KinesiaBus
import KinesiaJSON
import KinesiaMotion
import KinesiaSystem
public import KinesiaWire

/// A public bus key, as its `NAME.pub` file holds it: what the broker's operator allows and what
/// clients need of the broker (`--server-key broker.pub`).
public struct BusPublicKey: Hashable, Sendable {
    /// The key's name.
    public var name: String
    /// Its role.
    public var role: BusRole
    /// The CURVE public key (Z85, 40 characters).
    public var key: String

    /// Makes a public key.
    public init(name: String, role: BusRole, key: String) {
        self.name = name
        self.role = role
        self.key = key
    }

    /// The text of the `.pub` file.
    public var fileText: String {
        """
        # Kinesia bus public key. The broker allows it with: kinesia keys allow \(name).pub
        name = \(name)
        role = \(role)
        public-key = \(key)

        """
    }

    /// Reads a public key text (pure). A secret key text (one with a `secret-key` line) is refused.
    /// - Throws: ``BusKeyError/malformed(_:reason:)``.
    public init(parsing text: String, source: String) throws(BusKeyError) {
        let fields = try BusKeyText.fields(text, source: source)
        // A secret file has every line a public one has: without this check, a `.key` given where
        // a `.pub` belongs (`--server-key broker.key`, a copy into an allowed directory) would
        // work, and a secret would travel where only public keys should.
        guard fields["secret-key"] == nil else {
            throw .malformed(
                source,
                reason: "it is a secret key file (it has a secret-key line); give its .pub file, and keep "
                    + "the .key private on its own box")
        }
        guard let key = fields["public-key"] else { throw .malformed(source, reason: "no public-key line") }
        guard key.utf8.count == 40, key.utf8.allSatisfy(BusKeyText.isZ85) else {
            throw .malformed(source, reason: "public-key is not 40 Z85 characters")
        }
        self.init(
            name: try BusKeyText.name(fields, source: source),
            role: try BusKeyText.role(fields, source: source),
            key: key)
    }

    /// Loads a `.pub` file.
    /// - Parameter role: The role it must have, if any.
    /// - Throws: ``BusKeyError``.
    public static func load(_ path: String, role: BusRole? = nil) throws(BusKeyError) -> BusPublicKey {
        let bytes = try BusKeyText.read(path, secret: false)
        let key = try BusPublicKey(parsing: String(decoding: bytes, as: UTF8.self), source: path)
        if let role, key.role != role {
            throw .wrongRole(path, found: key.role, needed: role)
        }
        return key
    }
}
