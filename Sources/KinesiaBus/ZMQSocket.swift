import CZeroMQ

/// A libzmq socket, owned: it is closed by ``close()`` or when the last reference goes away.
///
/// A socket is not thread-safe and therefore not `Sendable`: make it on the thread (or in the
/// actor) that uses it, or hand it over with `sending`. It retains its ``context``.
///
/// LINGER is always set when the socket is made (``defaultLinger``, zero unless you pass
/// another value), so closing a socket with unsent messages never makes
/// ``ZMQContext/terminate()`` wait forever as libzmq's default would.
///
/// ```swift
/// let context = try ZMQContext()
/// let pull = try ZMQSocket(.pull, context: context)
/// let endpoint = try pull.bind("tcp://127.0.0.1:*")   // "tcp://127.0.0.1:43127"
/// let push = try ZMQSocket(.push, context: context)
/// try push.connect(endpoint)
/// try push.send([Array("hello".utf8)])
/// let frames = try pull.receive()                     // [[104, 101, 108, 108, 111]]
/// ```
public final class ZMQSocket {
    /// The LINGER a socket gets unless its initializer is told otherwise: unsent messages are
    /// dropped at ``close()``. Set a longer linger on sockets that must drain on shutdown.
    public static let defaultLinger: Duration = .zero

    /// The context the socket was made from (retained).
    public let context: ZMQContext
    /// The socket's kind.
    public let type: SocketType

    /// The raw `void *`, `nil` once closed. Every access is a short read or write on the socket's
    /// own thread (the type is not `Sendable`), so the dynamic exclusivity check is left out of
    /// the hot path.
    @exclusivity(unchecked) private(set) var handle: UnsafeMutableRawPointer?

    /// Makes a socket of `type` in `context`, with LINGER set.
    ///
    /// - Parameters:
    ///   - type: The kind of socket.
    ///   - context: The context; it is retained by the socket.
    ///   - linger: How long ``close()`` keeps unsent messages (`nil`: until sent, which can make
    ///     ``ZMQContext/terminate()`` wait forever).
    /// - Throws: ``ZMQError/terminated`` after the context was shut down, or the error of
    ///   `zmq_socket` (too many sockets...).
    public init(_ type: SocketType, context: ZMQContext, linger: Duration? = defaultLinger) throws(ZMQError) {
        self.context = context
        self.type = type
        let raw = try context.withOpenHandle { (ctx) throws(ZMQError) -> UnsafeMutableRawPointer in
            guard let raw = zmq_socket(ctx, type.zmqValue) else { throw ZMQError.last() }
            return raw
        }
        handle = raw
        do {
            try set(.linger, linger)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { handle == nil }

    /// Closes the socket. Safe to call more than once; never fails, never prints.
    ///
    /// Messages not yet sent are kept for at most the socket's LINGER. A monitor of the socket
    /// is stopped first (libzmq would otherwise stop it only when its reaper has finished with
    /// the socket, still raising events until then): from here on nothing is sent to a
    /// ``SocketMonitor``'s reader, which can then be closed at any time.
    public func close() {
        guard let raw = handle else { return }
        handle = nil
        _ = zmq_socket_monitor(raw, nil, 0)
        _ = zmq_close(raw)
    }

    /// Runs `body` with the raw socket, or throws ``ZMQError/closed`` if it was closed.
    @inline(__always)
    func withHandle<R>(_ body: (UnsafeMutableRawPointer) throws(ZMQError) -> R) throws(ZMQError) -> R {
        guard let raw = handle else { throw ZMQError.closed }
        return try body(raw)
    }

    /// Binds the socket to a local endpoint and returns the endpoint actually bound.
    ///
    /// With a wildcard port (`tcp://127.0.0.1:*`) the returned endpoint carries the port the
    /// system chose (`ZMQ_LAST_ENDPOINT`), ready for a peer to connect to.
    ///
    /// Binding an IPC path that another socket already bound silently takes it over (libzmq
    /// removes the file); use a private directory (``IPCDirectory``) per deployment.
    ///
    /// - Parameter endpoint: `tcp://host:port`, `ipc:///path`, `inproc://name`...
    /// - Returns: The bound endpoint.
    /// - Throws: ``ZMQError/addressInUse``, ``ZMQError/protocolNotSupported``,
    ///   ``ZMQError/nameTooLong``, ``ZMQError/invalidArgument``...
    @discardableResult
    public func bind(_ endpoint: String) throws(ZMQError) -> String {
        try withHandle { (raw) throws(ZMQError) in
            _ = try zmqCall { zmq_bind(raw, endpoint) }
        }
        return (try? get(.lastEndpoint)) ?? endpoint
    }

    /// Connects the socket to a remote endpoint. The connection is made in the background and
    /// re-established after failures; messages are queued meanwhile.
    ///
    /// - Throws: ``ZMQError/invalidArgument`` for a malformed endpoint,
    ///   ``ZMQError/protocolNotSupported``...
    public func connect(_ endpoint: String) throws(ZMQError) {
        try withHandle { (raw) throws(ZMQError) in
            _ = try zmqCall { zmq_connect(raw, endpoint) }
        }
    }

    /// Stops listening on an endpoint bound before (use the string ``bind(_:)`` returned).
    ///
    /// - Throws: ``ZMQError/notFound`` if the endpoint is not bound.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        try withHandle { (raw) throws(ZMQError) in
            _ = try zmqCall { zmq_unbind(raw, endpoint) }
        }
    }

    /// Disconnects from an endpoint connected before.
    ///
    /// - Throws: ``ZMQError/notFound`` if the endpoint is not connected.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        try withHandle { (raw) throws(ZMQError) in
            _ = try zmqCall { zmq_disconnect(raw, endpoint) }
        }
    }
}

@available(*, unavailable, message: "libzmq sockets are not thread-safe: confine one to a thread")
extension ZMQSocket: Sendable {}
