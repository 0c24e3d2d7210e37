import Foundation
import KinesiaBus
import KinesiaJSON
import KinesiaMotion
import KinesiaSystem
import KinesiaWire

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
    static func create(_ path: String, _ bytes: [UInt8], permissions: UInt32) throws(BusKeyError) {
        do throws(Errno) {
            let file = try FileDescriptor.open(path, .write.creatingNew, permissions: permissions)
            try file.setPermissions(permissions)
            try file.write(bytes, at: 0)
        } catch {
            if error == .exists { throw .exists(path) }
            throw .unwritable(path, reason: error.description)
        }
    }
}
