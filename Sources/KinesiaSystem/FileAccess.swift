import Glibc

/// How a file is opened: `open(2)`'s access mode and flags as a value, so that the targets
/// above this one open files without importing Glibc.
///
/// ```swift
/// let file = try FileDescriptor.open(path, .write.creating.truncating)
/// let log = try directory.openFile("events.skipped", .write.creating.appending)
/// ```
public struct FileAccess: Sendable, Hashable, CustomStringConvertible {
    /// `open(2)`'s flags.
    public let flags: Int32

    private init(flags: Int32) { self.flags = flags }

    /// Reading only (`O_RDONLY`).
    public static let read = FileAccess(flags: O_RDONLY)
    /// Writing only (`O_WRONLY`).
    public static let write = FileAccess(flags: O_WRONLY)
    /// Reading and writing (`O_RDWR`).
    public static let readWrite = FileAccess(flags: O_RDWR)

    /// Made when missing (`O_CREAT`, with the permissions the opening call gives).
    public var creating: FileAccess { FileAccess(flags: flags | O_CREAT) }
    /// Made, and refused when it exists (`O_CREAT | O_EXCL`).
    public var creatingNew: FileAccess { FileAccess(flags: flags | O_CREAT | O_EXCL) }
    /// Emptied (`O_TRUNC`).
    public var truncating: FileAccess { FileAccess(flags: flags | O_TRUNC) }
    /// Every write at the end (`O_APPEND`).
    public var appending: FileAccess { FileAccess(flags: flags | O_APPEND) }
    /// Never waiting to open or read (`O_NONBLOCK`: a FIFO or a device is not waited for).
    public var nonBlocking: FileAccess { FileAccess(flags: flags | O_NONBLOCK) }
    /// A terminal that does not become the controlling one (`O_NOCTTY`).
    public var notControllingTerminal: FileAccess { FileAccess(flags: flags | O_NOCTTY) }
    /// Refused when the last component is a symbolic link (`O_NOFOLLOW`).
    public var notFollowingLinks: FileAccess { FileAccess(flags: flags | O_NOFOLLOW) }
    /// Refused unless it is a directory (`O_DIRECTORY`).
    public var directory: FileAccess { FileAccess(flags: flags | O_DIRECTORY) }

    public var description: String {
        var names: [String] =
            switch flags & O_ACCMODE {
            case O_WRONLY: ["O_WRONLY"]
            case O_RDWR: ["O_RDWR"]
            default: ["O_RDONLY"]
            }
        for (flag, name) in [
            (O_CREAT, "O_CREAT"), (O_EXCL, "O_EXCL"), (O_TRUNC, "O_TRUNC"), (O_APPEND, "O_APPEND"),
            (O_NONBLOCK, "O_NONBLOCK"), (O_NOCTTY, "O_NOCTTY"), (O_NOFOLLOW, "O_NOFOLLOW"),
            (O_DIRECTORY, "O_DIRECTORY"),
        ] where flags & flag != 0 {
            names.append(name)
        }
        return names.joined(separator: " | ")
    }
}
