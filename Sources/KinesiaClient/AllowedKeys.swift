import Foundation
import KinesiaSystem
public import KinesiaWire

/// The public keys a broker admits, with their roles: the files `DIR/<role>/*.pub` of its
/// allowed-keys directory (`kinesia keys allow` puts them there).
///
/// ```text
/// allowed/
///   ingest/cam0.pub
///   worker/worker-a.pub
///   worker/worker-b.pub
///   consumer/ward-tablet.pub
/// ```
///
/// A key's role is its directory's: a file whose `role` line says another is skipped, and so is
/// a key found under two roles (both files), each with a line in ``problems``. The broker reads
/// the directory again at every connection, so a key allowed (or removed) takes effect for the
/// next connection without a restart: rotate by allowing the new key, moving the process to it,
/// then removing the old one.
public struct AllowedKeys: Hashable, Sendable {
    /// One admitted key.
    public struct Entry: Hashable, Sendable {
        /// The key's name (its file's base name).
        public var name: String
        /// Its role (its directory).
        public var role: BusRole
        /// Its file.
        public var path: String
    }

    /// The admitted keys, by their Z85 public key.
    public private(set) var entries: [String: Entry] = [:]
    /// Files that were skipped, and why (one sentence each).
    public private(set) var problems: [String] = []

    /// No key.
    public init() {}

    /// Reads the files given with their role directory (pure: no file access).
    /// - Parameter files: Each `.pub` file's role directory, path and text.
    public init(files: [(role: BusRole, path: String, text: String)]) {
        var seen: [String: [Entry]] = [:]
        for file in files {
            let key: BusPublicKey
            do {
                key = try BusPublicKey(parsing: file.text, source: file.path)
            } catch {
                problems.append("skipped: \(error)")
                continue
            }
            guard key.role == file.role else {
                problems.append(
                    "skipped \(file.path): it is a \(key.role) key in the \(file.role) directory")
                continue
            }
            seen[key.key, default: []].append(Entry(name: key.name, role: file.role, path: file.path))
        }
        for (key, found) in seen {
            if Set(found.map(\.role)).count > 1 {
                problems.append(
                    "skipped the key of " + found.map(\.path).sorted().joined(separator: " and ")
                        + ": one key cannot have two roles")
                continue
            }
            entries[key] = found[0]
        }
        problems.sort()
    }

    /// Reads `directory/<role>/*.pub` for every role (a missing directory has no key).
    public static func load(directory: String) -> AllowedKeys {
        var files: [(role: BusRole, path: String, text: String)] = []
        var problems: [String] = []
        for role in BusRole.allCases {
            let folder = directory + "/" + role.rawValue
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() where name.hasSuffix(".pub") {
                let path = folder + "/" + name
                do {
                    let bytes = try BusKeyText.read(path, secret: false)
                    files.append((role, path, String(decoding: bytes, as: UTF8.self)))
                } catch {
                    problems.append("skipped: \(error)")
                }
            }
        }
        var keys = AllowedKeys(files: files)
        keys.problems = (problems + keys.problems).sorted()
        return keys
    }

    /// The entry of a Z85 public key, or `nil` when it is not admitted.
    public func entry(for publicKey: String) -> Entry? { entries[publicKey] }

    /// The number of admitted keys of each role.
    public var countsByRole: [BusRole: Int] {
        entries.values.reduce(into: [:]) { $0[$1.role, default: 0] += 1 }
    }
}

extension AllowedKeys {
    /// Writes `key` as `directory/<role>/<name>.pub` (directories made 0700 when missing).
    /// Allowing the same key again changes nothing.
    /// - Returns: The file's path.
    /// - Throws: ``BusKeyError/exists(_:)`` when another key has that name and role.
    @discardableResult
    public static func allow(_ key: BusPublicKey, in directory: String) throws(BusKeyError) -> String {
        let folder = directory + "/" + key.role.rawValue
        try BusKeyText.makeDirectory(folder)
        let path = folder + "/" + key.name + ".pub"
        if let existing = try? BusPublicKey.load(path), existing == key { return path }
        try BusKeyText.create(path, Array(key.fileText.utf8), permissions: 0o644)
        return path
    }

    /// Removes `directory/<role>/<name>.pub`.
    /// - Returns: The removed file's path.
    /// - Throws: ``BusKeyError/missing(_:)`` when there is no such key.
    @discardableResult
    public static func revoke(name: String, role: BusRole, in directory: String) throws(BusKeyError) -> String
    {
        let path = directory + "/" + role.rawValue + "/" + name + ".pub"
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            if !FileManager.default.fileExists(atPath: path) { throw .missing(path) }
            throw .unwritable(path, reason: error.localizedDescription)
        }
        return path
    }
}

extension AllowedKeys {
    /// The pools a worker key may report for: the names in `directory/worker/<name>.pools` (one
    /// a line; blank lines and lines from `#` on are skipped), or `nil` when there is no such
    /// file (any pool). A file that is there but cannot be read admits no pool.
    public static func pools(ofWorker name: String, in directory: String) -> Set<String>? {
        let path = directory + "/" + BusRole.worker.rawValue + "/" + name + ".pools"
        do throws(Errno) {
            let file = try FileDescriptor.open(path, .read)
            let bytes = try file.read(upTo: min(try file.size(), 1 << 16), at: 0)
            return pools(parsing: String(decoding: bytes, as: UTF8.self))
        } catch {
            return error == .noSuchFile ? nil : []
        }
    }

    /// The pool names of a `.pools` file's text.
    public static func pools(parsing text: String) -> Set<String> {
        var pools: Set<String> = []
        for line in text.split(whereSeparator: \.isNewline) {
            let name = line.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { pools.insert(name) }
        }
        return pools
    }
}
