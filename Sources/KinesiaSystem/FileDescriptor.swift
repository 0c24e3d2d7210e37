public import Glibc

/// An open file descriptor, owned: closed by ``close()`` or, failing that, when the value goes
/// away.
///
/// Not copyable, so exactly one owner closes it, once. Every call retries `EINTR`
/// (``Errno/retryingOnInterrupt(_:)``) and throws ``Errno`` otherwise; a would-block is a
/// value (``ReadResult/wouldBlock``, `false` from ``tryLock()``), not an error. Descriptors
/// opened here are close-on-exec.
///
/// ```swift
/// let file = try FileDescriptor.open("/tmp/x", .readWrite.creating)
/// guard try file.tryLock() else { print("held by another process"); return }
/// ```
public struct FileDescriptor: ~Copyable, Sendable {
    /// The descriptor number, for calls this type does not wrap. Valid while the value lives.
    public let rawValue: Int32

    /// Takes ownership of an open descriptor.
    public init(owning rawValue: Int32) {
        precondition(rawValue >= 0, "not a descriptor: \(rawValue)")
        self.rawValue = rawValue
    }

    deinit {
        _ = Glibc.close(rawValue)
    }

    /// Closes the descriptor (`close(2)` is not retried on `EINTR`: on Linux the descriptor is
    /// gone either way).
    ///
    /// - Throws: ``Errno`` (`EIO`: a write-back failed); the descriptor is closed even then.
    public consuming func close() throws(Errno) {
        let rawValue = self.rawValue
        discard self
        if Glibc.close(rawValue) != 0 { throw Errno.current }
    }

    /// Opens `path` (`O_CLOEXEC` is always added).
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - access: `.read`, `.readWrite.creating`...
    ///   - permissions: The mode of a created file.
    /// - Throws: ``Errno``.
    public static func open(_ path: String, _ access: FileAccess, permissions: mode_t = 0o600) throws(Errno)
        -> FileDescriptor
    {
        let descriptor = try Errno.retryingOnInterrupt { () -> Int32 in
            Glibc.open(path, access.flags | O_CLOEXEC, permissions)
        }
        return FileDescriptor(owning: descriptor)
    }

    /// A new descriptor for the same open file (`F_DUPFD_CLOEXEC`), e.g. standard input.
    ///
    /// - Throws: ``Errno``.
    public static func duplicate(_ rawValue: Int32) throws(Errno) -> FileDescriptor {
        FileDescriptor(
            owning: try Errno.retryingOnInterrupt { () -> Int32 in fcntl(rawValue, F_DUPFD_CLOEXEC, 0) })
    }

    /// Both ends of a new pipe, close-on-exec.
    ///
    /// - Throws: ``Errno``.
    public static func pipe() throws(Errno) -> Pipe {
        var ends: [Int32] = [-1, -1]
        try Errno.retryingOnInterrupt { () -> Int32 in Glibc.pipe(&ends) }
        let pipe = Pipe(readEnd: FileDescriptor(owning: ends[0]), writeEnd: FileDescriptor(owning: ends[1]))
        try pipe.readEnd.setCloseOnExec()
        try pipe.writeEnd.setCloseOnExec()
        return pipe
    }

    /// Closes the descriptor in the programs this process executes.
    ///
    /// - Throws: ``Errno``.
    public func setCloseOnExec() throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in fcntl(rawValue, F_SETFD, FD_CLOEXEC) }
    }

    /// The two ends of a pipe.
    @frozen public struct Pipe: ~Copyable, Sendable {
        /// Where the bytes come out.
        public var readEnd: FileDescriptor
        /// Where the bytes go in.
        public var writeEnd: FileDescriptor
    }

    /// Makes reads and writes return ``ReadResult/wouldBlock`` instead of waiting.
    ///
    /// - Throws: ``Errno``.
    public func setNonBlocking() throws(Errno) {
        let flags = try Errno.retryingOnInterrupt { () -> Int32 in fcntl(rawValue, F_GETFL) }
        try Errno.retryingOnInterrupt { () -> Int32 in fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    /// What a ``read(into:)`` got.
    public enum ReadResult: Hashable, Sendable {
        /// This many bytes (at least one).
        case bytes(Int)
        /// The end of the file, or a pipe whose every writer closed it.
        case end
        /// Nothing to read now (a non-blocking descriptor).
        case wouldBlock
    }

    /// Reads what is there, at most `buffer.count` bytes, into the start of `buffer`.
    ///
    /// - Throws: ``Errno`` for a failure other than `EINTR` (retried) and `EAGAIN` (a value).
    public func read(into buffer: inout [UInt8]) throws(Errno) -> ReadResult {
        do throws(Errno) {
            let count = try Errno.retryingOnInterrupt {
                buffer.withUnsafeMutableBytes { Glibc.read(rawValue, $0.baseAddress, $0.count) }
            }
            return count == 0 ? .end : .bytes(count)
        } catch {
            if error == .wouldBlock { return .wouldBlock }
            throw error
        }
    }

    /// Reads up to `maximumCount` bytes at `offset`, as far as the file goes.
    ///
    /// - Throws: ``Errno``.
    public func read(upTo maximumCount: Int, at offset: Int = 0) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: maximumCount)
        let count = try Errno.retryingOnInterrupt {
            bytes.withUnsafeMutableBytes { pread(rawValue, $0.baseAddress, $0.count, off_t(offset)) }
        }
        return Array(bytes.prefix(count))
    }

    /// Writes all of `bytes` at `offset` (a regular file).
    ///
    /// - Throws: ``Errno``.
    public func write(_ bytes: [UInt8], at offset: Int) throws(Errno) {
        var written = 0
        while written < bytes.count {
            written += try Errno.retryingOnInterrupt {
                bytes.withUnsafeBytes {
                    pwrite(rawValue, $0.baseAddress! + written, $0.count - written, off_t(offset + written))
                }
            }
        }
    }

    /// Cuts the file to `length` bytes.
    ///
    /// - Throws: ``Errno``.
    public func truncate(to length: Int) throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in ftruncate(rawValue, off_t(length)) }
    }

    /// Waits at most `timeout` until there is something to read (or the end).
    ///
    /// A signal during the wait starts it again with the whole `timeout`.
    /// - Returns: Whether the descriptor is readable (`false`: the time ran out).
    /// - Throws: ``Errno``.
    public func waitUntilReadable(timeout: Duration) throws(Errno) -> Bool {
        var entry = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds
                / 1_000_000_000_000_000)
        return try Errno.retryingOnInterrupt { () -> Int32 in poll(&entry, 1, milliseconds) } > 0
    }

    /// Takes the exclusive `flock` on the file without waiting.
    ///
    /// The kernel releases it when every descriptor of this open file is closed, even when the
    /// process dies by SIGKILL.
    /// - Returns: Whether it is taken (`false`: another open file holds it).
    /// - Throws: ``Errno`` for a failure other than `EWOULDBLOCK`.
    public func tryLock() throws(Errno) -> Bool {
        do throws(Errno) {
            try Errno.retryingOnInterrupt { () -> Int32 in flock(rawValue, LOCK_EX | LOCK_NB) }
            return true
        } catch {
            if error == .wouldBlock { return false }
            throw error
        }
    }

    /// Releases the `flock` taken by ``tryLock()``.
    ///
    /// - Throws: ``Errno``.
    public func unlock() throws(Errno) {
        try Errno.retryingOnInterrupt { () -> Int32 in flock(rawValue, LOCK_UN) }
    }
}
