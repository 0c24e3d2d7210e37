import CZeroMQ
import Synchronization

/// A libzmq context: the I/O threads and the registry that a process's sockets share.
///
/// A context is thread-safe and `Sendable`; the sockets made from it are not (each is confined
/// to one thread or actor). Every ``ZMQSocket`` retains its context, so a context lives at least
/// as long as its sockets and its `deinit` never waits for an open socket.
///
/// ```swift
/// let context = try ZMQContext()
/// let publisher = try ZMQSocket(.pub, context: context)
/// try publisher.bind("ipc:///run/kinesia/poses")
/// // ...
/// publisher.close()
/// context.terminate()
/// ```
///
/// Shutting down from another thread: ``shutdown()`` makes every blocking call on the context's
/// sockets fail at once with ``ZMQError/terminated``; each owner then closes its socket, and
/// ``terminate()`` returns once all of them are closed. Sockets are created with a finite
/// LINGER, so unsent messages never keep ``terminate()`` waiting.
public final class ZMQContext: Sendable {
    /// The raw `void *`, never exposed.
    let handle: ContextHandle

    private let state = Mutex(State.open)

    private enum State {
        case open, shutDown, terminating, terminated
    }

    /// Makes a context.
    ///
    /// - Parameter ioThreads: libzmq I/O threads (`ZMQ_IO_THREADS`); one is enough for about a
    ///   gigabyte per second.
    /// - Throws: ``ZMQError`` if libzmq cannot make one (out of file descriptors).
    public init(ioThreads: Int = 1) throws(ZMQError) {
        guard let raw = zmq_ctx_new() else { throw ZMQError.last() }
        handle = ContextHandle(raw: raw)
        if ioThreads != 1 {
            let threads = Int32(clamping: max(ioThreads, 0))
            _ = try? zmqCall { zmq_ctx_set(raw, ZMQ_IO_THREADS, threads) }
        }
    }

    deinit {
        // No ZMQSocket can be open here (each retains its context), so this never waits.
        let needsTerm = state.withLock { $0 != .terminated }
        if needsTerm {
            _ = try? zmqCall { zmq_ctx_term(handle.raw) }
        }
    }

    /// Whether ``shutdown()`` or ``terminate()`` was called.
    public var isShutDown: Bool {
        state.withLock { $0 != .open }
    }

    /// Makes every blocking operation on this context's sockets fail with
    /// ``ZMQError/terminated`` and refuses new sockets. Returns at once; safe from any thread and
    /// safe to call more than once.
    public func shutdown() {
        let proceed = state.withLock { state -> Bool in
            guard state == .open else { return false }
            state = .shutDown
            return true
        }
        if proceed {
            _ = zmq_ctx_shutdown(handle.raw)
        }
    }

    /// Shuts the context down and waits until every socket made from it is closed, then frees it.
    ///
    /// Blocking calls in other threads fail with ``ZMQError/terminated``; their owners must then
    /// close their sockets (the types of this module do so on their own threads). Calling it
    /// while a socket that only this thread could close is still open waits forever, as
    /// `zmq_ctx_term` does: close your own sockets first. A second call returns at once.
    public func terminate() {
        let proceed = state.withLock { state -> Bool in
            guard state == .open || state == .shutDown else { return false }
            state = .terminating
            return true
        }
        guard proceed else { return }
        _ = try? zmqCall { zmq_ctx_term(handle.raw) }
        state.withLock { $0 = .terminated }
    }

    /// Runs `body` with the raw context if the context still accepts new sockets. The lock is
    /// held during `body`, so termination cannot start while a socket is being made.
    func withOpenHandle<R>(
        _ body: (UnsafeMutableRawPointer) throws(ZMQError) -> R
    ) throws(ZMQError) -> R {
        try state.withLock { (state: inout State) throws(ZMQError) -> R in
            guard state == .open else { throw ZMQError.terminated }
            return try body(handle.raw)
        }
    }
}

/// The context pointer. libzmq contexts are thread-safe, which is what makes this sendable.
struct ContextHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}
