public import Glibc

extension FileDescriptor {
    /// The names in this open directory, without `.` and `..`, in no particular order.
    ///
    /// Reads through a duplicate of the descriptor (`fdopendir` takes ownership of the one it
    /// is given), so this descriptor stays open and usable.
    /// - Throws: ``Errno``.
    public func entryNames() throws(Errno) -> [String] {
        let raw = try Errno.retryingOnInterrupt { () -> Int32 in fcntl(rawValue, F_DUPFD_CLOEXEC, 0) }
        guard let directory = fdopendir(raw) else {
            let error = Errno.current
            _ = Glibc.close(raw)
            throw error
        }
        // closedir closes the duplicate.
        defer { closedir(directory) }
        rewinddir(directory)
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The size of the open file in bytes (`fstat`'s `st_size`).
    ///
    /// - Throws: ``Errno``.
    public func size() throws(Errno) -> Int {
        var info = stat()
        try Errno.retryingOnInterrupt { () -> Int32 in fstat(rawValue, &info) }
        return Int(info.st_size)
    }

    /// Writes the file's data (and the metadata needed to read it back) to the device
    /// (`fdatasync`).
    ///
    /// - Throws: ``Errno`` (`EIO`, `ENOSPC`...).
    public func synchronizeData() throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in fdatasync(rawValue) }
    }

    /// Writes the directory entries, or the whole file, to the device (`fsync`).
    ///
    /// - Throws: ``Errno``.
    public func synchronize() throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in fsync(rawValue) }
    }

    /// Makes the directory `name` in this directory (`mkdirat`).
    ///
    /// - Returns: `true` when made, `false` when something already had that name.
    /// - Throws: ``Errno`` for another failure.
    public func makeDirectory(entry name: String, permissions: mode_t) throws(Errno) -> Bool {
        do throws(Errno) {
            try Errno.retryingOnInterrupt { () -> Int32 in mkdirat(rawValue, name, permissions) }
            return true
        } catch {
            if error.rawValue == EEXIST { return false }
            throw error
        }
    }

    /// Removes the empty directory `name` of this directory (`unlinkat` with `AT_REMOVEDIR`).
    ///
    /// - Throws: ``Errno``.
    public func removeDirectory(entry name: String) throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in unlinkat(rawValue, name, AT_REMOVEDIR) }
    }

    /// Writes all of `bytes` at `offset`, through `pwrite`, retrying `EINTR` and short writes.
    ///
    /// - Returns: How many bytes were written before a failure (all of them on success).
    /// - Throws: Nothing: a failure is returned with the count, so that a caller can cut a
    ///   partial write (``Errno`` in `.1`, `nil` on success).
    public func write(
        _ bytes: UnsafeRawBufferPointer, at offset: Int
    ) -> (written: Int, error: Errno?) {
        Self.write(descriptor: rawValue, bytes, at: offset)
    }

    /// ``write(_:at:)`` on a descriptor number this type does not own (the caller keeps it
    /// open meanwhile).
    public static func write(
        descriptor rawValue: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int
    ) -> (written: Int, error: Errno?) {
        var written = 0
        while written < bytes.count {
            do throws(Errno) {
                written += try Errno.retryingOnInterrupt {
                    pwrite(
                        rawValue, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written)
                    )
                }
            } catch {
                return (written, error)
            }
        }
        return (written, nil)
    }
}

extension FileDescriptor {
    /// Renames the entry `name` of this directory to `newName` (`renameat`), replacing what
    /// had that name atomically.
    ///
    /// - Throws: ``Errno``.
    public func renameEntry(_ name: String, to newName: String) throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in renameat(rawValue, name, rawValue, newName) }
    }
}

extension FileDescriptor {
    /// Opens `path` only if it is a regular file, never waiting on what it turns out to be.
    ///
    /// A plain `open(2)` of a FIFO waits until a writer opens it (for ever, if none does), and a
    /// terminal may become the process's controlling one. This opens with `O_NONBLOCK` and
    /// `O_NOCTTY` added, so the call returns at once whatever is there, then checks with `fstat`
    /// what was opened: anything but a regular file is closed unread and refused. On a regular
    /// file `O_NONBLOCK` changes nothing, so the descriptor reads and writes as usual.
    ///
    /// ```swift
    /// let file = try FileDescriptor.openRegularFile("/etc/kinesia/broker.key")
    /// let bytes = try file.read(upTo: 4096)
    /// ```
    /// - Parameters:
    ///   - path: The file (a symbolic link is followed; add ``FileAccess/notFollowingLinks``
    ///     to refuse one).
    ///   - access: ``FileAccess/read`` (the default), ``FileAccess/readWrite``...
    /// - Throws: ``RegularFileError/notRegular(_:)`` for a FIFO, a device, a directory...,
    ///   ``RegularFileError/system(_:)`` when `open` or `fstat` fails.
    public static func openRegularFile(_ path: String, _ access: FileAccess = .read) throws(RegularFileError)
        -> FileDescriptor
    {
        let file: FileDescriptor
        do throws(Errno) {
            file = try open(path, access.nonBlocking.notControllingTerminal)
        } catch {
            throw .system(error)
        }
        let kind: FileStatus.Kind
        do throws(Errno) {
            kind = try file.status().kind
        } catch {
            throw .system(error)
        }
        guard kind == .regular else { throw .notRegular(kind) }
        return file
    }
}
