import CZeroMQ

/// An error reported by libzmq (or by the system underneath it): the `errno` value and
/// libzmq's description of it.
///
/// Compare against the documented statics to react to a particular condition:
///
/// ```swift
/// do {
///     try socket.bind("tcp://127.0.0.1:5555")
/// } catch ZMQError.addressInUse {
///     // another process holds the port
/// }
/// ```
///
/// Only a would-block condition is ever turned into a value instead of an error: the
/// non-blocking calls (``ZMQSocket/tryReceive()``, ``ZMQSocket/trySend(_:)``) return `nil` or
/// `false` for it. The blocking calls throw ``wouldBlock`` only when a timeout that you set
/// (``SocketOption/receiveTimeout``, ``SocketOption/sendTimeout``) expires.
///
/// This file is the only one of the module that reads `errno`; interrupted calls (`EINTR`) are
/// retried here wherever retrying is safe (nothing was sent or consumed).
public struct ZMQError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value (system numbers, or libzmq's own such as ``terminated``).
    public let code: Int32

    /// Wraps an `errno` value.
    public init(code: Int32) {
        self.code = code
    }

    /// libzmq's description of the error (`zmq_strerror`).
    public var message: String {
        String(cString: zmq_strerror(code))
    }

    /// The message and the number, for logs: `"Context was terminated (errno 156384765)"`.
    public var description: String {
        "\(message) (errno \(code))"
    }

    /// `EAGAIN`: the operation would block (non-blocking mode), or a send/receive timeout
    /// expired.
    public static let wouldBlock = ZMQError(code: kinesia_EAGAIN)
    /// `ETERM`: the socket's context was shut down or terminated; close the socket.
    public static let terminated = ZMQError(code: kinesia_ETERM)
    /// `EINTR`: a signal interrupted a call that could not be retried safely.
    public static let interrupted = ZMQError(code: kinesia_EINTR)
    /// `EINVAL`: an invalid argument (unknown option, malformed endpoint or key...).
    public static let invalidArgument = ZMQError(code: kinesia_EINVAL)
    /// `ENOTSOCK`: the socket was already closed.
    public static let closed = ZMQError(code: kinesia_ENOTSOCK)
    /// `ENOTSUP`: the operation is not supported by this socket type (receiving on a PUB...).
    public static let notSupported = ZMQError(code: kinesia_ENOTSUP)
    /// `EFSM`: the socket is in the wrong state for this operation (a REQ sending twice...).
    public static let wrongState = ZMQError(code: kinesia_EFSM)
    /// `EADDRINUSE`: the address is already bound.
    public static let addressInUse = ZMQError(code: kinesia_EADDRINUSE)
    /// `EADDRNOTAVAIL`: the address is not local (bind) or not available.
    public static let addressNotAvailable = ZMQError(code: kinesia_EADDRNOTAVAIL)
    /// `EPROTONOSUPPORT`: the endpoint's transport is not supported.
    public static let protocolNotSupported = ZMQError(code: kinesia_EPROTONOSUPPORT)
    /// `ENOCOMPATPROTO`: the transport is not compatible with the socket type.
    public static let incompatibleProtocol = ZMQError(code: kinesia_ENOCOMPATPROTO)
    /// `EHOSTUNREACH`: the message cannot be routed (ROUTER with unknown routing id).
    public static let hostUnreachable = ZMQError(code: kinesia_EHOSTUNREACH)
    /// `ENAMETOOLONG`: an IPC path longer than the system allows (107 bytes on Linux).
    public static let nameTooLong = ZMQError(code: kinesia_ENAMETOOLONG)
    /// `ENOENT`: no such file, directory or endpoint (unbind of an endpoint never bound...).
    public static let notFound = ZMQError(code: kinesia_ENOENT)
    /// `EMFILE`: too many open files or sockets.
    public static let tooManyOpenFiles = ZMQError(code: kinesia_EMFILE)
    /// `EMTHREAD`: no I/O thread is available for the operation.
    public static let noIOThread = ZMQError(code: kinesia_EMTHREAD)

    /// The error of the last failed libzmq call on this thread.
    static func last() -> ZMQError {
        ZMQError(code: zmq_errno())
    }

    /// The error of the last failed system call on this thread.
    static func lastSystemError() -> ZMQError {
        ZMQError(code: kinesia_errno())
    }
}

/// Outcome of one libzmq call whose would-block result is a value.
enum ZMQCallResult<Value> {
    case done(Value)
    case wouldBlock
}

/// Calls a libzmq function that returns -1 and sets `errno` on failure, retrying `EINTR`.
///
/// Use only for calls where an interrupted attempt has no effect (nothing was queued or
/// consumed): `zmq_send`, `zmq_msg_send`, `zmq_msg_recv`, `zmq_ctx_term`, option calls.
@inline(__always)
func zmqCall(_ body: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = ZMQError.last()
        if error == .interrupted { continue }
        throw error
    }
}

/// Like ``zmqCall(_:)``, but `EAGAIN` is returned as ``ZMQCallResult/wouldBlock``.
@inline(__always)
func zmqNonBlockingCall(_ body: () -> Int32) throws(ZMQError) -> ZMQCallResult<Int32> {
    while true {
        let result = body()
        if result >= 0 { return .done(result) }
        let error = ZMQError.last()
        if error == .interrupted { continue }
        if error == .wouldBlock { return .wouldBlock }
        throw error
    }
}

/// Calls a system function that returns -1 and sets `errno` on failure, retrying `EINTR`.
@inline(__always)
func systemCall(_ body: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = ZMQError.lastSystemError()
        if error == .interrupted { continue }
        throw error
    }
}
