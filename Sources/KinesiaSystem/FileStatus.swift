public import Glibc

/// What `lstat(2)`, `fstat(2)` or `fstatat(2)` say about a file: its type, owner, permissions
/// and identity (device and inode).
///
/// Never follows a symbolic link: a link is reported as ``Kind-swift.enum/symbolicLink``, so a
/// check on this value is a check on the file itself, not on what a link points to.
///
/// ```swift
/// let status = try FileStatus(path: "/run/kinesia")
/// status.kind == .directory && status.owner == geteuid() && status.permissions & 0o077 == 0
/// ```
public struct FileStatus: Hashable, Sendable {
    /// The type of a file.
    public enum Kind: Hashable, Sendable {
        /// A regular file.
        case regular
        /// A directory.
        case directory
        /// A symbolic link (never followed).
        case symbolicLink
        /// A Unix domain socket.
        case socket
        /// A FIFO (a named pipe): opening it for reading waits for a writer unless `O_NONBLOCK`.
        case fifo
        /// A character or block device.
        case device
        /// Anything else.
        case other

        /// `"a regular file"`, `"a FIFO"`...: for messages.
        public var name: String {
            switch self {
            case .regular: "a regular file"
            case .directory: "a directory"
            case .symbolicLink: "a symbolic link"
            case .socket: "a socket"
            case .fifo: "a FIFO"
            case .device: "a device"
            case .other: "a special file"
            }
        }
    }

    /// The type.
    public var kind: Kind
    /// The owner's user id.
    public var owner: uid_t
    /// The permission bits (`st_mode & 0o7777`).
    public var permissions: mode_t
    /// The device of the file system that holds it.
    public var device: UInt64
    /// The inode number on that device.
    public var inode: UInt64
    /// The last change of the inode (`st_ctim`), in nanoseconds since the epoch: a new file that
    /// reuses a removed file's inode number has another.
    public var changedAt: Int64
    /// How many names the file has (`st_nlink`): 0 for an open file whose last name was removed.
    public var linkCount: UInt64

    /// The status of `path` itself (`lstat`: a symbolic link is not followed).
    ///
    /// - Throws: ``Errno`` (``Errno/noSuchFile`` when nothing is there).
    public init(path: String) throws(Errno) {
        var info = stat()
        try Errno.retryingOnInterrupt { () -> Int32 in lstat(path, &info) }
        self.init(info)
    }

    /// Reads a `stat` record.
    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        case S_IFIFO: kind = .fifo
        case S_IFCHR, S_IFBLK: kind = .device
        default: kind = .other
        }
        owner = info.st_uid
        permissions = info.st_mode & 0o7777
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        changedAt = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
        linkCount = UInt64(info.st_nlink)
    }

    /// Whether `other` is the same file, whatever its name now: same device and inode, and
    /// the same inode change time (a file made after this one was removed may get its inode
    /// number again, not its change time). A file whose inode changed since (`chmod`, a new
    /// link) counts as another: callers that remove only their own files then leave it.
    public func isSameFile(as other: FileStatus) -> Bool {
        isSameInode(as: other) && changedAt == other.changedAt
    }

    /// Whether `other` has the same device and inode. Enough to tell that a path still names a
    /// file held open (an inode number is not given again while a descriptor holds it), and,
    /// unlike ``isSameFile(as:)``, not upset by a change to it: a directory's change time moves
    /// whenever another process adds, renames or removes an entry in it.
    public func isSameInode(as other: FileStatus) -> Bool {
        device == other.device && inode == other.inode
    }
}

extension FileDescriptor {
    /// The status of the open file (`fstat`).
    ///
    /// - Throws: ``Errno``.
    public func status() throws(Errno) -> FileStatus {
        var info = stat()
        try Errno.retryingOnInterrupt { () -> Int32 in fstat(rawValue, &info) }
        return FileStatus(info)
    }

    /// The status of the entry `name` of this directory, not following a symbolic link
    /// (`fstatat` with `AT_SYMLINK_NOFOLLOW`).
    ///
    /// - Returns: The status, or `nil` when there is no such entry.
    /// - Throws: ``Errno`` for a failure other than `ENOENT`.
    public func status(ofEntry name: String) throws(Errno) -> FileStatus? {
        var info = stat()
        do throws(Errno) {
            try Errno.retryingOnInterrupt { () -> Int32 in
                fstatat(rawValue, name, &info, AT_SYMLINK_NOFOLLOW)
            }
        } catch {
            if error == .noSuchFile { return nil }
            throw error
        }
        return FileStatus(info)
    }

    /// Opens the entry `name` of this directory (`openat`), never following a symbolic link:
    /// `O_NOFOLLOW` and `O_CLOEXEC` are always added, so a link there fails with `ELOOP`.
    ///
    /// - Parameters:
    ///   - name: A file name in this directory (no `/`).
    ///   - access: `.read`, `.readWrite.creating`...
    ///   - permissions: The mode of a created file.
    /// - Throws: ``Errno``.
    public func open(entry name: String, _ access: FileAccess, permissions: mode_t = 0o600) throws(Errno)
        -> FileDescriptor
    {
        let descriptor = try Errno.retryingOnInterrupt { () -> Int32 in
            openat(rawValue, name, access.flags | O_NOFOLLOW | O_CLOEXEC, permissions)
        }
        return FileDescriptor(owning: descriptor)
    }

    /// Removes the entry `name` of this directory (`unlinkat`; a link is removed, not followed).
    ///
    /// - Throws: ``Errno``.
    public func removeEntry(_ name: String) throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in unlinkat(rawValue, name, 0) }
    }

    /// Sets the permission bits of the open file (`fchmod`).
    ///
    /// - Throws: ``Errno``.
    public func setPermissions(_ permissions: mode_t) throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in fchmod(rawValue, permissions) }
    }

    /// Makes the directory `path` (`mkdir`).
    ///
    /// - Returns: `true` when it was made, `false` when something already had that name
    ///   (`EEXIST`: it may be anything, even a link; check what it is before trusting it).
    /// - Throws: ``Errno`` for another failure (``Errno/noSuchFile``: a parent is missing).
    public static func makeDirectory(_ path: String, permissions: mode_t) throws(Errno) -> Bool {
        do throws(Errno) {
            try Errno.retryingOnInterrupt { () -> Int32 in mkdir(path, permissions) }
            return true
        } catch {
            if error.rawValue == EEXIST { return false }
            throw error
        }
    }
}
