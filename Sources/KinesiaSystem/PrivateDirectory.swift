public import Glibc

/// A directory that only the running user can enter, held open: the one place that decides
/// whether a directory may hold a process's sockets and lock.
///
/// ``open(_:creating:)`` trusts a directory only when it is a real directory (never a symbolic
/// link: `O_NOFOLLOW | O_DIRECTORY`), owned by the effective user, and without any group or
/// other permission. It changes nothing it did not make: a directory it creates is set to 0700
/// (through the descriptor, after the ownership check), an existing one is used as it is or
/// refused, never `chmod`ed. The files inside are reached relative to the descriptor held open
/// (`openat`, `fstatat`, `unlinkat`), so renaming or replacing a directory on the path later
/// cannot redirect them.
///
/// ```swift
/// let directory = try PrivateDirectory.open("/run/user/1000/kinesia")
/// let lock = try directory.openFile("broker.lock", .readWrite.creating)
/// ```
public struct PrivateDirectory: ~Copyable, Sendable {
    /// The directory's path, as given.
    public let path: String
    /// The open directory.
    public let descriptor: FileDescriptor
    /// Whether ``open(_:creating:)`` made it.
    public let wasCreated: Bool

    private init(path: String, descriptor: consuming FileDescriptor, wasCreated: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.wasCreated = wasCreated
    }

    /// Opens `path` if it is a private directory of the running user, making it (mode 0700,
    /// and its missing parents) first when `creating`.
    ///
    /// - Parameters:
    ///   - path: An absolute path.
    ///   - creating: Whether to make the directory when it is missing.
    /// - Throws: ``PrivateDirectoryError``: a link, not a directory, another owner, group or
    ///   other permissions, or the system's error.
    public static func open(_ path: String, creating: Bool = true) throws(PrivateDirectoryError)
        -> PrivateDirectory
    {
        var created = false
        if creating {
            created = try makeDirectory(path)
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, .read.directory.notFollowingLinks)
        } catch {
            // ELOOP (a link) or ENOTDIR (a file): say which, from the entry itself.
            if let status = try? FileStatus(path: path) {
                if status.kind == .symbolicLink { throw PrivateDirectoryError(path, .symbolicLink) }
                if status.kind != .directory { throw PrivateDirectoryError(path, .notADirectory) }
            }
            throw PrivateDirectoryError(path, .system("open", error))
        }
        var status: FileStatus
        do {
            status = try descriptor.status()
        } catch {
            throw PrivateDirectoryError(path, .system("fstat", error))
        }
        let user = geteuid()
        guard status.owner == user else {
            throw PrivateDirectoryError(path, .owner(status.owner, user: user))
        }
        if created {
            // Ours, just made: the umask may have removed owner bits; set exactly 0700.
            do {
                try descriptor.setPermissions(0o700)
                status = try descriptor.status()
            } catch {
                throw PrivateDirectoryError(path, .system("fchmod", error))
            }
        } else if status.permissions & 0o077 != 0 {
            throw PrivateDirectoryError(path, .loosePermissions(status.permissions))
        }
        // The path must still name the directory held open (not swapped since the open). The
        // inode, not its change time: workers sharing a state directory change it all the time.
        guard let current = try? FileStatus(path: path), current.isSameInode(as: status) else {
            throw PrivateDirectoryError(path, .replaced)
        }
        return PrivateDirectory(path: path, descriptor: descriptor, wasCreated: created)
    }

    /// Makes `path` (mode 0700) and its missing parents (mode 0700).
    /// - Returns: Whether `path` itself was made.
    private static func makeDirectory(_ path: String) throws(PrivateDirectoryError) -> Bool {
        do {
            return try FileDescriptor.makeDirectory(path, permissions: 0o700)
        } catch let error where error == .noSuchFile {
            let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            guard !parent.isEmpty else { throw PrivateDirectoryError(path, .system("mkdir", error)) }
            _ = try makeDirectory(parent)
            do {
                return try FileDescriptor.makeDirectory(path, permissions: 0o700)
            } catch {
                throw PrivateDirectoryError(path, .system("mkdir", error))
            }
        } catch {
            throw PrivateDirectoryError(path, .system("mkdir", error))
        }
    }

    /// Checks the entry `name` when there is one: it must be no link, owned by the running
    /// user, without group or other permissions.
    ///
    /// - Returns: Its status, or `nil` when there is no such entry.
    /// - Throws: ``PrivateDirectoryError`` naming the entry.
    @discardableResult
    public func checkEntry(_ name: String) throws(PrivateDirectoryError) -> FileStatus? {
        let status: FileStatus?
        do {
            status = try descriptor.status(ofEntry: name)
        } catch {
            throw PrivateDirectoryError(entry(name), .system("fstatat", error))
        }
        guard let status else { return nil }
        try Self.check(status, of: entry(name))
        return status
    }

    /// Opens (or, with `O_CREAT`, makes with mode 0600) the entry `name`, never following a
    /// link, and checks it as ``checkEntry(_:)`` does; it must be a regular file.
    ///
    /// Never waits: the entry is opened with `O_NONBLOCK` (which changes nothing on a regular
    /// file), so a FIFO there is refused at once instead of blocking until a writer comes.
    /// - Throws: ``PrivateDirectoryError`` naming the entry.
    public func openFile(_ name: String, _ access: FileAccess) throws(PrivateDirectoryError) -> FileDescriptor
    {
        let file: FileDescriptor
        do {
            file = try descriptor.open(
                entry: name, access.nonBlocking.notControllingTerminal, permissions: 0o600)
        } catch {
            if error.rawValue == ELOOP { throw PrivateDirectoryError(entry(name), .symbolicLink) }
            throw PrivateDirectoryError(entry(name), .system("open", error))
        }
        let status: FileStatus
        do {
            status = try file.status()
        } catch {
            throw PrivateDirectoryError(entry(name), .system("fstat", error))
        }
        try Self.check(status, of: entry(name))
        guard status.kind == .regular else {
            throw PrivateDirectoryError(entry(name), .notARegularFile(status.kind))
        }
        return file
    }

    /// Removes the entry `name` only if it is still the file `status` describes (same device
    /// and inode): a file that another process put there since is left alone.
    ///
    /// - Returns: Whether it was removed.
    @discardableResult
    public func removeEntry(_ name: String, ifStill status: FileStatus) -> Bool {
        guard let current = try? descriptor.status(ofEntry: name), current.isSameFile(as: status) else {
            return false
        }
        return (try? descriptor.removeEntry(name)) != nil
    }

    /// Closes the directory.
    public consuming func close() {
        try? descriptor.close()
    }

    private func entry(_ name: String) -> String {
        path + "/" + name
    }

    private static func check(_ status: FileStatus, of path: String) throws(PrivateDirectoryError) {
        if status.kind == .symbolicLink { throw PrivateDirectoryError(path, .symbolicLink) }
        let user = geteuid()
        guard status.owner == user else {
            throw PrivateDirectoryError(path, .owner(status.owner, user: user))
        }
        guard status.permissions & 0o077 == 0 else {
            throw PrivateDirectoryError(path, .loosePermissions(status.permissions))
        }
    }
}

/// Why ``PrivateDirectory`` refuses a directory or a file in it.
public struct PrivateDirectoryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Hashable, Sendable {
        /// A symbolic link (never followed).
        case symbolicLink
        /// Not a directory.
        case notADirectory
        /// A file that should be a regular one is something else (a FIFO, a device...).
        case notARegularFile(FileStatus.Kind)
        /// Owned by another user.
        case owner(uid_t, user: uid_t)
        /// Group or other permission bits are set (the mode).
        case loosePermissions(mode_t)
        /// The path named another directory once opened.
        case replaced
        /// A system call failed.
        case system(String, Errno)
    }

    /// The directory or file.
    public var path: String
    /// What is wrong.
    public var reason: Reason

    /// Makes an error.
    public init(_ path: String, _ reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// A sentence for people: `/tmp/kinesia-0 is owned by uid 65534, not by uid 0`.
    public var description: String {
        switch reason {
        case .symbolicLink: "\(path) is a symbolic link (links are not followed there)"
        case .notADirectory: "\(path) is not a directory"
        case .notARegularFile(let kind): "\(path) is \(kind.name), not a regular file"
        case .owner(let owner, let user): "\(path) is owned by uid \(owner), not by uid \(user) (you)"
        case .loosePermissions(let mode):
            "\(path) has mode 0\(String(mode, radix: 8)): other users may reach it (it must be 0700 "
                + "for a directory, 0600 for a file, left as it is)"
        case .replaced: "\(path) was replaced while it was opened"
        case .system(let call, let error): "\(path): \(call): \(error)"
        }
    }
}
