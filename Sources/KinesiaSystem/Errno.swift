import Glibc

/// A failed system call's `errno`, with the C library's words for it.
///
/// The only file of the package (besides libzmq's own `ZMQError`) that reads `errno`: every
/// call goes through ``Errno/retryingOnInterrupt(_:)`` (or one of its siblings), which retries
/// `EINTR` and turns a failure into this value. `EAGAIN` is not an error where it is expected:
/// the callers that meet it (non-blocking reads, `flock(LOCK_NB)`) turn ``wouldBlock`` into a
/// value of their own result type.
///
/// ```swift
/// do {
///     let file = try FileDescriptor.open("/etc/hostname", .readOnly)
/// } catch {
///     print(error)  // "No such file or directory (ENOENT, 2)"
/// }
/// ```
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` number.
    public var rawValue: Int32

    /// Wraps an `errno` number (for calls such as `posix_spawn` that return it).
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// `EINTR`: a signal interrupted the call (retried here, never thrown by this module).
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN` (`EWOULDBLOCK` on Linux): a non-blocking call would have to wait.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `ENOENT`: no such file or directory.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `ECHILD`: no such child (another waiter reaped it).
    public static let noChild = Errno(rawValue: ECHILD)
    /// `ESRCH`: no such process.
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// `ENOSYS`: the C library lacks the function.
    public static let notImplemented = Errno(rawValue: ENOSYS)
    /// `EBADF`: not an open descriptor.
    public static let badDescriptor = Errno(rawValue: EBADF)
    /// `EEXIST`: the file exists (an exclusive creation refused).
    public static let exists = Errno(rawValue: EEXIST)
    /// `ENOSPC`: no space left on the device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EDQUOT`: the user's disk quota is exceeded.
    public static let quotaExceeded = Errno(rawValue: EDQUOT)

    /// `EIO`: an input/output error (a hung-up terminal).
    public static let inputOutput = Errno(rawValue: EIO)
    /// `ENXIO`: no such device or address.
    public static let noSuchDevice = Errno(rawValue: ENXIO)
    /// `ENODEV`: no such device (an unplugged USB device).
    public static let noDevice = Errno(rawValue: ENODEV)
    /// `EPIPE`: the other end is gone.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ENOTTY`: not a terminal, or an `ioctl` the device does not know.
    public static let notATerminal = Errno(rawValue: ENOTTY)
    /// `EINVAL`: an invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `EACCES`: permission denied.
    public static let accessDenied = Errno(rawValue: EACCES)
    /// `EPERM`: operation not permitted.
    public static let notPermitted = Errno(rawValue: EPERM)

    /// The value of `errno` now.
    public static var current: Errno { Errno(rawValue: errno) }

    /// `strerror`'s words: `No such file or directory`.
    public var description: String {
        String(cString: strerror(rawValue))
    }

    /// Calls `body` until it does not fail with `EINTR`.
    ///
    /// - Parameter body: A system call that returns -1 and sets `errno` on failure.
    /// - Returns: What `body` returned when it succeeded.
    /// - Throws: ``Errno`` for any failure but `EINTR`.
    @discardableResult
    public static func retryingOnInterrupt<Result: FixedWidthInteger>(
        _ body: () -> Result
    ) throws(Errno) -> Result {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code != EINTR { throw Errno(rawValue: code) }
        }
    }

    /// Calls `body` until it does not fail with `EINTR`, for calls that return their error
    /// number instead of setting `errno` (`posix_spawn`, `pthread_*`).
    ///
    /// - Throws: ``Errno`` for any nonzero result but `EINTR`.
    public static func retryingReturnedErrorOnInterrupt(_ body: () -> Int32) throws(Errno) {
        while true {
            let code = body()
            if code == 0 { return }
            if code != EINTR { throw Errno(rawValue: code) }
        }
    }

    /// Runs `body` and restores `errno` afterwards (for signal handlers, which must not change
    /// it under the interrupted code). Allocates nothing: safe in a handler.
    public static func preserving(_ body: () -> Void) {
        let saved = errno
        body()
        errno = saved
    }
}
