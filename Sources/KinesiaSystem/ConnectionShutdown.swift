import Glibc

/// Ends a connection whose descriptor another owner holds (libzmq's, reported by a socket
/// monitor), without closing the descriptor.
///
/// `shutdown(2)` both ways: the owner's next read sees the end of the connection, and the owner
/// closes the descriptor itself, as for a peer that left. Closing it here instead would let the
/// number be reused under the owner, which would then read and close someone else's file.
///
/// A descriptor that is no longer a socket fails with `ENOTSOCK`, one already shut down with
/// `ENOTCONN`: nothing happens to it.
///
/// ```swift
/// try? ConnectionShutdown.shutDown(descriptor: Int32(event.value))
/// ```
public enum ConnectionShutdown {
    /// Shuts the connection on `descriptor` down for reading and writing.
    /// - Throws: ``Errno`` (`ENOTSOCK`, `ENOTCONN`, `EBADF`).
    public static func shutDown(descriptor: Int32) throws(Errno) {
        try Errno.retryingOnInterrupt { Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
    }
}
