import KinesiaSystem

/// The access tokens of `kinesia web`: one file per token in a private directory (mode 0700,
/// files 0600), `NAME.token`, holding the token's role and the SHA-256 of the token, never the
/// token itself. A token is `kw1_` and 64 hexadecimal digits (32 random bytes from the system's
/// generator); it is shown once, when it is made.
///
/// ```swift
/// let tokens = try WebTokens(directory: "/home/clinic/.config/kinesia/web-tokens")
/// let token = try tokens.issue(name: "tablet-1", role: .viewer)   // shown once
/// tokens.load().grant(for: token)   // Grant(name: "tablet-1", role: .viewer)
/// try tokens.revoke(name: "tablet-1")
/// ```
public struct WebTokens: Sendable {
    /// What a token may do.
    public enum Role: String, CaseIterable, Sendable, Hashable {
        /// Reads: sessions, snapshots, events, metrics, reports.
        case viewer
        /// Reads, and controls sessions (start, stop, reset, baseline).
        case therapist
    }

    /// A token's name and role.
    public struct Grant: Sendable, Hashable {
        /// The name it was made under.
        public var name: String
        /// What it may do.
        public var role: Role

        /// A grant.
        public init(name: String, role: Role) {
            self.name = name
            self.role = role
        }
    }

    /// The tokens as read at one moment: hashes to grants.
    public struct Snapshot: Sendable {
        /// Each token's SHA-256, hexadecimal, with its grant.
        public var grants: [String: Grant]
        /// Files that could not be read as tokens (named, not trusted).
        public var problems: [String]

        /// Tokens as read.
        public init(grants: [String: Grant], problems: [String]) {
            self.grants = grants
            self.problems = problems
        }

        /// The grant of `token`, or `nil` for a token that is not (or no longer) known.
        public func grant(for token: String) -> Grant? {
            guard token.utf8.count <= 128 else { return nil }
            return grants[SHA256.hex(Array(token.utf8))]
        }
    }

    /// The directory.
    public let directory: String

    /// Opens (making it when missing) the private directory of the tokens.
    /// - Throws: ``WebTokenError/directory(_:)``: not a private directory of this user.
    public init(directory: String) throws(WebTokenError) {
        self.directory = directory
        do {
            try PrivateDirectory.open(directory, creating: true).close()
        } catch {
            throw .directory("\(error)")
        }
    }

    /// Whether `name` may name a token: 1 to 64 letters, digits, `.`, `_` or `-`, not starting
    /// with a dot.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), bytes[0] != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// Makes a new token `name` with `role`, replacing one of the same name (which stops
    /// working), and returns it: the only time it is shown.
    /// - Throws: ``WebTokenError``.
    public func issue<Generator: RandomNumberGenerator>(
        name: String, role: Role, using generator: inout Generator
    ) throws(WebTokenError) -> String {
        guard Self.isValidName(name) else { throw .invalidName(name) }
        var secret = "kw1_"
        for _ in 0..<4 {
            let word = generator.next()
            for shift in stride(from: 60, through: 0, by: -4) {
                secret.append(Character(Unicode.Scalar(Self.hexDigits[Int((word >> UInt64(shift)) & 0xF)])))
            }
        }
        let text = "role \(role.rawValue)\nsha256 \(SHA256.hex(Array(secret.utf8)))\n"
        do {
            let opened = try PrivateDirectory.open(directory, creating: true)
            let temporary = ".\(name).token.new"
            let file = try opened.openFile(temporary, .write.creating.truncating)
            try file.write(Array(text.utf8), at: 0)
            try file.close()
            try opened.descriptor.renameEntry(temporary, to: "\(name).token")
        } catch {
            throw .cannotWrite(name, "\(error)")
        }
        return secret
    }

    /// ``issue(name:role:using:)`` with the system's generator (`getrandom`).
    public func issue(name: String, role: Role) throws(WebTokenError) -> String {
        var generator = SystemRandomNumberGenerator()
        return try issue(name: name, role: role, using: &generator)
    }

    /// Removes token `name`: requests with it are refused from the next reading of the tokens.
    /// - Throws: ``WebTokenError/unknown(_:)`` when there is none.
    public func revoke(name: String) throws(WebTokenError) {
        guard Self.isValidName(name) else { throw .invalidName(name) }
        do {
            let opened = try PrivateDirectory.open(directory, creating: false)
            guard (try? opened.checkEntry("\(name).token")) != nil else { throw WebTokenError.unknown(name) }
            try opened.descriptor.removeEntry("\(name).token")
        } catch let error as WebTokenError {
            throw error
        } catch {
            throw .cannotWrite(name, "\(error)")
        }
    }

    /// The tokens now.
    public func load() -> Snapshot {
        var snapshot = Snapshot(grants: [:], problems: [])
        guard let opened = try? PrivateDirectory.open(directory, creating: false),
            let names = try? opened.descriptor.entryNames()
        else {
            snapshot.problems.append("\(directory): not a private directory of this user")
            return snapshot
        }
        for entry in names.sorted() where entry.hasSuffix(".token") && !entry.hasPrefix(".") {
            let name = String(entry.dropLast(6))
            guard Self.isValidName(name), let file = try? opened.openFile(entry, .read),
                let bytes = try? file.read(upTo: 4096, at: 0),
                let grant = Self.parse(String(decoding: bytes, as: UTF8.self), name: name)
            else {
                snapshot.problems.append("\(directory)/\(entry): not a token file")
                continue
            }
            snapshot.grants[grant.hash] = grant.grant
        }
        return snapshot
    }

    private static func parse(_ text: String, name: String) -> (hash: String, grant: Grant)? {
        var role: Role?
        var hash: String?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "role": role = Role(rawValue: parts[1])
            case "sha256" where parts[1].utf8.count == 64 && parts[1].utf8.allSatisfy(isHexDigit):
                hash = parts[1]
            default: return nil
            }
        }
        guard let role, let hash else { return nil }
        return (hash, Grant(name: name, role: role))
    }

    private static let hexDigits = Array("0123456789abcdef".unicodeScalars.map { UInt8($0.value) })

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66)
    }
}

/// Why a token could not be made, revoked or kept.
public enum WebTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The tokens' directory is not a private directory of this user.
    case directory(String)
    /// Not a token name.
    case invalidName(String)
    /// No token of this name.
    case unknown(String)
    /// The file could not be written or removed.
    case cannotWrite(String, String)

    /// What went wrong, for a person.
    public var description: String {
        switch self {
        case .directory(let reason): "cannot use the tokens' directory: \(reason)"
        case .invalidName(let name):
            "'\(name)' is not a token name (1 to 64 letters, digits, '.', '_' or '-', not starting with '.')"
        case .unknown(let name): "there is no token named '\(name)'"
        case .cannotWrite(let name, let reason): "cannot write the token '\(name)': \(reason)"
        }
    }
}
