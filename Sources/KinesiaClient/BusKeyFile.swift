import Foundation
import Glibc
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

/// Why a key file cannot be used.
public enum BusKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No file there.
    case missing(String)
    /// The file cannot be read.
    case unreadable(String, reason: String)
    /// A secret key file its group or others may access (permissions shown in octal).
    case notPrivate(String, permissions: UInt32)
    /// The text is not a key file.
    case malformed(String, reason: String)
    /// The key's role is not the one needed.
    case wrongRole(String, found: BusRole, needed: BusRole)
    /// A file that would be replaced.
    case exists(String)
    /// A file or directory that cannot be written.
    case unwritable(String, reason: String)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .missing(let path):
            "key file \(path) does not exist (make one with: kinesia keys new NAME --role ROLE)"
        case .unreadable(let path, let reason): "cannot read key file \(path): \(reason)"
        case .notPrivate(let path, let permissions):
            "refusing secret key file \(path): its mode is \(String(permissions, radix: 8)), readable or "
                + "writable by others; make it private with: chmod 600 \(path)"
        case .malformed(let path, let reason): "\(path) is not a Kinesia key file: \(reason)"
        case .wrongRole(let path, let found, let needed):
            "the key \(path) is \(found.withArticle) key; this process needs \(needed.withArticle) key "
                + "(make one with: kinesia keys new NAME --role \(needed))"
        case .exists(let path): "\(path) exists already: remove it first or choose another name"
        case .unwritable(let path, let reason): "cannot write \(path): \(reason)"
        }
    }
}

/// The text format and file access shared by both key files.
enum BusKeyText {
    /// The largest key file read (a key file is about 250 bytes).
    static let maximumSize = 4096

    static func isZ85(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array(".-:+=^!/*?&<>()[]{}@%$#".utf8).contains(byte)
        }
    }

    /// The `field = value` lines; comments (`#` first) and blank lines skipped.
    static func fields(_ text: String, source: String) throws(BusKeyError) -> [String: String] {
        var fields: [String: String] = [:]
        // `isNewline`: a CRLF file's lines too (Swift reads "\r\n" as one Character, never "\n").
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            .enumerated()
        {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw .malformed(source, reason: "line \(index + 1) is not 'field = value'")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard ["name", "role", "public-key", "secret-key"].contains(name) else {
                throw .malformed(source, reason: "line \(index + 1): unknown field \(name.quotedExcerpt())")
            }
            guard fields.updateValue(value, forKey: name) == nil else {
                throw .malformed(source, reason: "line \(index + 1): \(name) given twice")
            }
        }
        return fields
    }

    static func name(_ fields: [String: String], source: String) throws(BusKeyError) -> String {
        guard let name = fields["name"] else { throw .malformed(source, reason: "no name line") }
        guard Topic.isValidName(name) else {
            throw .malformed(source, reason: Topic.invalidNameMessage(name, role: "key name"))
        }
        return name
    }

    static func role(_ fields: [String: String], source: String) throws(BusKeyError) -> BusRole {
        guard let text = fields["role"] else { throw .malformed(source, reason: "no role line") }
        guard let role = BusRole(rawValue: text) else {
            throw .malformed(
                source, reason: "unknown role \(text.quotedExcerpt()); expected one of: \(BusRole.choices)")
        }
        return role
    }

    /// Reads a key file; a `secret` one must not be accessible to group or others.
    ///
    /// Never waits: the file is opened with ``FileDescriptor/openRegularFile(_:_:)``, so a FIFO
    /// (which a plain open would wait on until a writer comes), a device or a directory at `path`
    /// is refused at once, unread.
    static func read(_ path: String, secret: Bool) throws(BusKeyError) -> [UInt8] {
        let file: FileDescriptor
        do throws(RegularFileError) {
            file = try FileDescriptor.openRegularFile(path)
        } catch {
            if error == .system(.noSuchFile) { throw .missing(path) }
            throw .unreadable(path, reason: error.description)
        }
        let opened: (FileStatus, [UInt8])
        do throws(Errno) {
            opened = (try file.status(), try file.read(upTo: maximumSize + 1))
        } catch {
            throw .unreadable(path, reason: error.description)
        }
        let (status, bytes) = opened
        if secret, status.permissions & 0o077 != 0 {
            throw .notPrivate(path, permissions: UInt32(status.permissions))
        }
        guard bytes.count <= maximumSize else { throw .malformed(path, reason: "over 4 KiB") }
        return bytes
    }

    /// Makes `path` and its missing parents (mode 0700).
    static func makeDirectory(_ path: String) throws(BusKeyError) {
        var made = ""
        for component in path.split(separator: "/") {
            made += "/" + component
            do {
                _ = try FileDescriptor.makeDirectory(made, permissions: 0o700)
            } catch {
                throw .unwritable(made, reason: error.description)
            }
        }
        guard (try? FileStatus(path: path))?.kind == .directory else {
            throw .unwritable(path, reason: "not a directory")
        }
    }

    /// Creates a new file (never replacing one) with these bytes and permissions.
    static func create(_ path: String, _ bytes: [UInt8], permissions: mode_t) throws(BusKeyError) {
        do throws(Errno) {
            let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL, permissions: permissions)
            try file.setPermissions(permissions)
            try file.write(bytes, at: 0)
        } catch {
            if error.rawValue == EEXIST { throw .exists(path) }
            throw .unwritable(path, reason: error.description)
        }
    }
}
