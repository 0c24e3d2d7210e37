import Foundation
import KinesiaBus
import KinesiaJSON
import KinesiaMotion
import KinesiaSystem
public import KinesiaWire

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
