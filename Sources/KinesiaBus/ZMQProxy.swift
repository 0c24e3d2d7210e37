import CZeroMQ
import Dispatch
import Foundation
import KinesiaSystem
import Synchronization

/// A libzmq proxy (`zmq_proxy_steerable`) running on its own thread: typically the XSUB
/// frontend where publishers connect and the XPUB backend where subscribers connect, so that no
/// process needs another's address.
///
/// ```swift
/// let proxy = try ZMQProxy(context: context, frontend: "tcp://127.0.0.1:*", backend: "tcp://127.0.0.1:*")
/// try publisher.connect(proxy.frontendEndpoint)
/// try subscriber.connect(proxy.backendEndpoint)
/// // ...
/// let statistics = try proxy.statistics()
/// proxy.stop()
/// ```
///
/// It stops cleanly from any thread: ``stop()`` sends the proxy its TERMINATE command (measured
/// to work with Debian's libzmq 4.3.4 over an inproc PAIR control socket) and waits for the
/// thread; shutting down or terminating the context stops it too. Either way the proxy thread
/// closes the frontend, the backend and the capture socket itself.
///
/// A capture socket receives a copy of every message with a blocking send: a capture peer that
/// stops reading stalls the whole proxy (`docs/architecture.md`, "libzmq facts that shape the code").
public final class ZMQProxy: Sendable {
    /// The frontend's bound endpoint (`ZMQ_LAST_ENDPOINT`), or empty if it only connected.
    public let frontendEndpoint: String
    /// The backend's bound endpoint (`ZMQ_LAST_ENDPOINT`), or empty if it only connected.
    public let backendEndpoint: String

    private let shared: Shared
    private let finished = DispatchGroup()

    /// What the proxy thread shares with the owner (the thread must not retain the proxy, whose
    /// `deinit` stops it).
    private final class Shared: Sendable {
        /// The owner's end of the control PAIR; `nil` once the proxy ended.
        let control: Mutex<ZMQSocket?>
        let ending = Mutex<ZMQError?>(nil)

        init(control: sending ZMQSocket) {
            self.control = Mutex(control)
        }
    }

    /// Starts a proxy between two sockets made and configured by the caller (high-water marks,
    /// CURVE...), bound or connected already. The proxy takes the sockets over.
    ///
    /// - Parameters:
    ///   - frontend: Usually an XSUB; messages received on it go to `backend`.
    ///   - backend: Usually an XPUB; messages received on it (subscriptions) go to `frontend`.
    ///   - capture: Optional: receives a copy of every message (a PUB, PUSH or PAIR).
    /// - Throws: ``ZMQError/closed`` if a socket was closed, or the error of making the control
    ///   socket.
    public init(
        frontend: sending ZMQSocket, backend: sending ZMQSocket, capture: sending ZMQSocket? = nil
    ) throws(ZMQError) {
        guard !frontend.isClosed, !backend.isClosed, capture?.isClosed != true else { throw ZMQError.closed }
        frontendEndpoint = (try? frontend.get(.lastEndpoint)) ?? ""
        backendEndpoint = (try? backend.get(.lastEndpoint)) ?? ""
        let endpoint = uniqueInprocEndpoint("proxy")
        let controlReceiver = try ZMQSocket(.pair, context: frontend.context)
        try controlReceiver.bind(endpoint)
        let controlSender = try ZMQSocket(.pair, context: frontend.context)
        try controlSender.set(.receiveTimeout, .seconds(5))
        try controlSender.connect(endpoint)
        let shared = Shared(control: controlSender)
        self.shared = shared

        let work = Transfer((frontend, backend, capture, controlReceiver))
        let group = finished
        group.enter()
        let thread = Thread.named("kinesia.proxy") {
            let (frontend, backend, capture, controlReceiver) = work.take()
            let error = Self.run(
                frontend: frontend, backend: backend, capture: capture, control: controlReceiver)
            frontend.close()
            backend.close()
            capture?.close()
            controlReceiver.close()
            shared.ending.withLock { $0 = error }
            shared.control.withLock { socket in
                socket?.close()
                socket = nil
            }
            group.leave()
        }
        thread.start()
    }

    /// Binds an XSUB frontend and an XPUB backend and starts a proxy between them.
    ///
    /// Both are bound with ``ZMQSocket/bindRestricted(_:umask:)``, so IPC socket files are
    /// accessible to their owner only.
    ///
    /// - Parameters:
    ///   - context: The context of both sockets.
    ///   - frontend: Where publishers connect (`tcp://127.0.0.1:*`, an IPC endpoint...).
    ///   - backend: Where subscribers connect.
    ///   - highWaterMark: The send and receive high-water mark of both sides (libzmq's default
    ///     is 1000).
    /// - Throws: The error of making or binding a socket.
    public convenience init(
        context: ZMQContext, frontend: String, backend: String, highWaterMark: Int32 = 1000
    ) throws(ZMQError) {
        let xsub = try ZMQSocket(.xsub, context: context)
        let xpub = try ZMQSocket(.xpub, context: context)
        try xsub.set(.sendHighWaterMark, highWaterMark)
        try xsub.set(.receiveHighWaterMark, highWaterMark)
        try xpub.set(.sendHighWaterMark, highWaterMark)
        try xpub.set(.receiveHighWaterMark, highWaterMark)
        try xsub.bindRestricted(frontend)
        try xpub.bindRestricted(backend)
        try self.init(frontend: xsub, backend: xpub)
    }

    deinit {
        stop()
    }

    /// Runs the proxy until TERMINATE or an error; returns the error, `nil` after TERMINATE.
    private static func run(frontend: ZMQSocket, backend: ZMQSocket, capture: ZMQSocket?, control: ZMQSocket)
        -> ZMQError?
    {
        while true {
            let result = zmq_proxy_steerable(frontend.handle, backend.handle, capture?.handle, control.handle)
            if result == 0 { return nil }
            let error = ZMQError.last()
            // A signal ends zmq_proxy_steerable without losing messages: run it again (its
            // statistics restart from zero).
            if error != .interrupted { return error }
        }
    }

    /// Whether the proxy thread is still running.
    public var isRunning: Bool {
        shared.control.withLock { $0 != nil }
    }

    /// Why the proxy ended: `nil` while it runs and after ``stop()``, ``ZMQError/terminated``
    /// after its context was shut down.
    public var endingError: ZMQError? {
        shared.ending.withLock { $0 }
    }

    /// Stops the proxy and waits for its thread to end. Safe from any thread, more than once.
    public func stop() {
        command("TERMINATE")
        finished.wait()
    }

    /// Waits until the proxy ends (after ``stop()`` from another thread or a context shutdown).
    public func wait() {
        finished.wait()
    }

    /// Suspends forwarding: messages wait in the sockets (up to their high-water marks).
    public func pause() {
        command("PAUSE")
    }

    /// Resumes forwarding after ``pause()``.
    public func resume() {
        command("RESUME")
    }

    /// The proxy's counters since it started (`STATISTICS` command).
    ///
    /// - Throws: ``ZMQError/terminated`` if the proxy has ended, ``ZMQError/wouldBlock`` if it
    ///   did not answer within five seconds.
    public func statistics() throws(ZMQError) -> ProxyStatistics {
        let values = try shared.control.withLock { (socket) throws(ZMQError) -> [UInt64] in
            guard let socket else { throw ZMQError.terminated }
            guard try socket.trySend([Array("STATISTICS".utf8)]) else { throw ZMQError.terminated }
            let frames = try socket.receive()
            guard frames.count == 8, frames.allSatisfy({ $0.count == 8 }) else { throw ZMQError.wrongState }
            return frames.map { frame in frame.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }
        }
        return ProxyStatistics(
            frontend: .init(
                messagesReceived: values[0], bytesReceived: values[1], messagesSent: values[2],
                bytesSent: values[3]),
            backend: .init(
                messagesReceived: values[4], bytesReceived: values[5], messagesSent: values[6],
                bytesSent: values[7]))
    }

    private func command(_ name: String) {
        shared.control.withLock { socket in
            _ = try? socket?.trySend([Array(name.utf8)])
        }
    }
}

/// Counters of a running ``ZMQProxy``, per side. libzmq counts whole messages (a message of two
/// frames counts one) and the bytes of all their frames.
public struct ProxyStatistics: Hashable, Sendable {
    /// The counters of one side of the proxy.
    public struct Side: Hashable, Sendable {
        /// Messages received on this side.
        public var messagesReceived: UInt64
        /// Bytes received on this side (all frames).
        public var bytesReceived: UInt64
        /// Messages sent from this side.
        public var messagesSent: UInt64
        /// Bytes sent from this side (all frames).
        public var bytesSent: UInt64

        /// Makes counters.
        public init(messagesReceived: UInt64, bytesReceived: UInt64, messagesSent: UInt64, bytesSent: UInt64)
        {
            self.messagesReceived = messagesReceived
            self.bytesReceived = bytesReceived
            self.messagesSent = messagesSent
            self.bytesSent = bytesSent
        }
    }

    /// The frontend (publishers' side): received = published, sent = subscriptions forwarded up.
    public var frontend: Side
    /// The backend (subscribers' side): received = subscriptions, sent = messages delivered.
    public var backend: Side

    /// Makes statistics.
    public init(frontend: Side, backend: Side) {
        self.frontend = frontend
        self.backend = backend
    }
}
