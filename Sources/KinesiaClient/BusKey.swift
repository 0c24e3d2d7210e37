import Foundation
public import KinesiaBus
import KinesiaJSON
import KinesiaMotion
import KinesiaSystem
public import KinesiaWire

/// A process's own bus key, read from its secret key file `NAME.key`: its name, its role and
/// its CURVE key pair.
///
/// The files are text, one `field = value` a line, `#` comments:
///
/// ```text
/// # Kinesia bus key: SECRET. Keep this file private (mode 0600) on this box.
/// name = cam0
/// role = ingest
/// public-key = rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7
/// secret-key = JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6
/// ```
///
/// The public file `NAME.pub` has the same lines without `secret-key`. A secret file that its
/// group or others may read or write is refused when loaded.
public struct BusKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's name (the files' base name): shown in logs and in the broker's counters.
    public var name: String
    /// What the key may do on the bus.
    public var role: BusRole
    /// The CURVE key pair.
    public var keyPair: CurveKeyPair

    /// Makes a key.
    public init(name: String, role: BusRole, keyPair: CurveKeyPair) {
        self.name = name
        self.role = role
        self.keyPair = keyPair
    }

    /// The public half, as its `.pub` file holds it.
    public var publicKey: BusPublicKey {
        BusPublicKey(name: name, role: role, key: keyPair.publicKey)
    }

    /// `BusKey(cam0, ingest, public: ...)`: never the secret.
    public var description: String { "BusKey(\(name), \(role), public: \(keyPair.publicKey))" }

    /// The text of the secret file.
    public var secretFileText: String {
        """
        # Kinesia bus key: SECRET. Keep this file private (mode 0600) on this box; give the
        # broker's operator \(name).pub, never this file.
        name = \(name)
        role = \(role)
        public-key = \(keyPair.publicKey)
        secret-key = \(keyPair.secretKey)

        """
    }

    /// Reads a secret key text (pure: no file access).
    /// - Parameter source: The file's path, for errors.
    /// - Throws: ``BusKeyError/malformed(_:reason:)``.
    public init(parsing text: String, source: String) throws(BusKeyError) {
        let fields = try BusKeyText.fields(text, source: source)
        guard let secret = fields["secret-key"] else {
            if fields["public-key"] != nil {
                throw .malformed(
                    source, reason: "it is a public key file (no secret-key line); give the .key file")
            }
            throw .malformed(source, reason: "no secret-key line")
        }
        let keyPair: CurveKeyPair
        do {
            keyPair = try CurveKeyPair(secretKey: secret)
        } catch {
            throw .malformed(source, reason: "secret-key is not 40 Z85 characters")
        }
        if let stated = fields["public-key"], stated != keyPair.publicKey {
            throw .malformed(source, reason: "public-key does not belong to secret-key")
        }
        self.init(
            name: try BusKeyText.name(fields, source: source),
            role: try BusKeyText.role(fields, source: source),
            keyPair: keyPair)
    }

    /// Loads a secret key file, refusing one that its group or others may access.
    /// - Parameters:
    ///   - path: The `.key` file.
    ///   - role: The role the loading process needs, if any: a key of another role is refused.
    /// - Throws: ``BusKeyError``.
    public static func load(_ path: String, role: BusRole? = nil) throws(BusKeyError) -> BusKey {
        let bytes = try BusKeyText.read(path, secret: true)
        let key = try BusKey(parsing: String(decoding: bytes, as: UTF8.self), source: path)
        if let role, key.role != role {
            throw .wrongRole(path, found: key.role, needed: role)
        }
        return key
    }

    /// Writes `NAME.key` (mode 0600) and `NAME.pub` (0644) in `directory` (made 0700 if
    /// missing), never replacing an existing file.
    /// - Returns: The paths of the secret and the public file.
    /// - Throws: ``BusKeyError``.
    @discardableResult
    public func write(to directory: String) throws(BusKeyError) -> (secret: String, public: String) {
        try BusKeyText.makeDirectory(directory)
        let secretPath = directory + "/" + name + ".key"
        let publicPath = directory + "/" + name + ".pub"
        for path in [secretPath, publicPath] where (try? FileStatus(path: path)) != nil {
            throw .exists(path)
        }
        try BusKeyText.create(secretPath, Array(secretFileText.utf8), permissions: 0o600)
        try BusKeyText.create(publicPath, Array(publicKey.fileText.utf8), permissions: 0o644)
        return (secretPath, publicPath)
    }

    /// `${XDG_CONFIG_HOME:-$HOME/.config}/kinesia/keys`: where `kinesia keys` keeps keys.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/kinesia/keys"
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return home + "/.config/kinesia/keys"
    }
}
