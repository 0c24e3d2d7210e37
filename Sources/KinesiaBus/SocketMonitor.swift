import CZeroMQ
import Dispatch
import Foundation
import KinesiaSystem
import Synchronization

/// Reads the events of one socket's monitor (`zmq_socket_monitor`) on the calling thread.
///
/// ```swift
/// let monitor = try subscriber.monitor()
/// try subscriber.connect(endpoint)
/// while let event = try monitor.next(timeout: .seconds(1)) {
///     if event.kind == .handshakeSucceeded { break }
/// }
/// ```
///
/// The monitor is a PAIR socket of the same context, not `Sendable`, used on one thread like any
/// socket. For events on their own thread as an `AsyncStream`, use
/// ``ZMQSocket/monitorStream(_:bufferingNewest:)``.
///
/// Closing: libzmq sends each event with a blocking send, from whichever thread raises it (the
/// I/O thread for connections and handshakes, the reaper for a closing socket), and a PAIR
/// whose reader is gone blocks that send for good: the context's I/O thread stops, no socket of
/// the context moves a message again, and `zmq_socket_monitor` and `zmq_ctx_term` wait for it
/// forever. So the monitoring must stop before the reader goes: ``close()`` stops it first for
/// a monitor made by ``ZMQSocket/monitor(_:)``, and ``ZMQSocket/close()`` stops it too. A
/// reader made from an endpoint (``init(endpoint:context:)``) must be closed after its socket.
/// A reader that never reads lets up to about 2,000 events queue up (the high-water marks of
/// both ends) before the same blocking begins: read it, or stop it.
public final class SocketMonitor {
    /// The inproc endpoint libzmq publishes the events on.
    public let endpoint: String
    let reader: ZMQSocket
    /// The socket monitored, when this monitor was made by ``ZMQSocket/monitor(_:)`` (same
    /// thread): ``close()`` stops its monitoring before closing the reader.
    private weak var socket: ZMQSocket?

    convenience init(monitoring socket: ZMQSocket, events: SocketEventMask) throws(ZMQError) {
        try self.init(endpoint: socket.publishEvents(events), context: socket.context)
        self.socket = socket
    }

    /// Reads the events that a socket publishes on `endpoint`
    /// (``ZMQSocket/publishEvents(_:)``): for a socket handed over to another owner (a
    /// ``ZMQProxy``) whose events this thread still counts.
    ///
    /// - Throws: ``ZMQError/terminated``.
    public init(endpoint: String, context: ZMQContext) throws(ZMQError) {
        self.endpoint = endpoint
        reader = try ZMQSocket(.pair, context: context)
        try reader.connect(endpoint)
    }

    /// The next event, waiting at most `timeout` (`nil`: without limit).
    ///
    /// - Returns: The event, or `nil` if none came in time.
    /// - Throws: ``ZMQError/terminated`` once the context shuts down, ``ZMQError/closed`` after
    ///   ``close()``.
    public func next(timeout: Duration?) throws(ZMQError) -> SocketEvent? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            let frames: [[UInt8]]?
            if let deadline {
                frames = try reader.receive(timeout: max(clock.now.duration(to: deadline), .zero))
            } else {
                frames = try reader.receive()
            }
            guard let frames else { return nil }
            if let event = SocketEvent(frames: frames) { return event }
        }
    }

    /// Waits for the first event of `kind`, skipping others, for at most `timeout` in total.
    ///
    /// - Returns: The event, or `nil` if none of that kind came in time.
    /// - Throws: As ``next(timeout:)``.
    public func next(_ kind: SocketEvent.Kind, timeout: Duration) throws(ZMQError) -> SocketEvent? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while let event = try next(timeout: max(clock.now.duration(to: deadline), .zero)) {
            if event.kind == kind { return event }
        }
        return nil
    }

    /// Stops the monitoring and closes the reader, as ``close()`` does: a monitor dropped
    /// without `close()` must not leave libzmq writing to a reader that is gone.
    deinit {
        close()
    }

    /// The socket the events arrive on, to wait for them with a ``Poller``.
    public var eventSocket: ZMQSocket { reader }

    /// Stops the monitoring of the socket (when this monitor was made by
    /// ``ZMQSocket/monitor(_:)`` and the socket is still open), then closes the reader: in that
    /// order, libzmq never sends an event to a reader that is gone. Safe to call more than once.
    public func close() {
        if let socket, !socket.isClosed, !reader.isClosed {
            try? socket.stopMonitoring()
        }
        socket = nil
        reader.close()
    }
}

@available(*, unavailable, message: "a monitor is a socket: confine it to one thread")
extension SocketMonitor: Sendable {}

extension ZMQSocket {
    /// Starts monitoring this socket and returns the reader of its events.
    ///
    /// Start it before bind or connect to see every event. Monitoring stops when the socket is
    /// closed or on ``stopMonitoring()`` (the monitor then reports
    /// ``SocketEvent/Kind/monitorStopped``).
    ///
    /// - Parameter events: The kinds to report.
    /// - Throws: ``ZMQError/closed``, ``ZMQError/terminated``.
    public func monitor(_ events: SocketEventMask = .all) throws(ZMQError) -> SocketMonitor {
        try SocketMonitor(monitoring: self, events: events)
    }

    /// Starts publishing this socket's events on a new inproc endpoint, and returns the
    /// endpoint for a ``SocketMonitor/init(endpoint:context:)`` reader. Connect the reader at
    /// once: events published before it connects are lost.
    ///
    /// - Throws: ``ZMQError/closed``, ``ZMQError/terminated``.
    public func publishEvents(_ events: SocketEventMask = .all) throws(ZMQError) -> String {
        let endpoint = uniqueInprocEndpoint("monitor")
        try withHandle { (raw) throws(ZMQError) in
            _ = try zmqCall { zmq_socket_monitor(raw, endpoint, events.rawValue) }
        }
        return endpoint
    }

    /// Starts monitoring this socket on a dedicated thread that yields each event to an
    /// `AsyncStream`.
    ///
    /// The thread ends when ``SocketEventStream/stop()`` is called, when the stream's consumer
    /// goes away, after ``SocketEvent/Kind/monitorStopped``, or when the context shuts down.
    ///
    /// - Parameters:
    ///   - events: The kinds to report.
    ///   - bufferingNewest: How many events the stream keeps for a slow consumer; beyond that
    ///     the oldest are dropped.
    /// - Throws: ``ZMQError/closed``, ``ZMQError/terminated``.
    public func monitorStream(
        _ events: SocketEventMask = .all, bufferingNewest: Int = 1024
    ) throws(ZMQError) -> SocketEventStream {
        // A reader by endpoint: the stream's thread must not touch this socket. The socket's
        // monitoring stops when it is closed (or on stopMonitoring()), before the stream's.
        try SocketEventStream(
            monitor: SocketMonitor(endpoint: publishEvents(events), context: context),
            bufferingNewest: bufferingNewest)
    }

    /// Stops the monitor of this socket; its reader receives
    /// ``SocketEvent/Kind/monitorStopped``.
    ///
    /// - Throws: ``ZMQError/closed``, ``ZMQError/terminated``.
    public func stopMonitoring() throws(ZMQError) {
        try withHandle { (raw) throws(ZMQError) in
            _ = try zmqCall { zmq_socket_monitor(raw, nil, 0) }
        }
    }
}

/// A socket's monitor events delivered on a dedicated thread as an `AsyncStream`.
///
/// ```swift
/// let monitor = try socket.monitorStream()
/// defer { monitor.stop() }
/// for await event in monitor.events where event.kind == .disconnected {
///     log("lost \(event.endpoint)")
/// }
/// ```
///
/// The stream buffers the newest events only (``ZMQSocket/monitorStream(_:bufferingNewest:)``);
/// when the consumer falls behind the oldest are dropped.
///
/// Close the socket (or call ``ZMQSocket/stopMonitoring()`` on its thread) before ``stop()``:
/// once the stream's reader is gone, an event the socket still raises would block libzmq's
/// thread (see ``SocketMonitor``).
public final class SocketEventStream: Sendable {
    /// The events, in order. Finishes when the monitoring thread ends.
    public let events: AsyncStream<SocketEvent>

    private let waker: ThreadWaker
    private let finished = DispatchGroup()

    /// Takes over `monitor`: the caller must not use it afterwards.
    init(monitor: SocketMonitor, bufferingNewest: Int) throws(ZMQError) {
        let (events, continuation) = AsyncStream.makeStream(
            of: SocketEvent.self, bufferingPolicy: .bufferingNewest(max(bufferingNewest, 1)))
        self.events = events
        let (waker, wakeReceiver) = try ThreadWaker.make(context: monitor.reader.context)
        self.waker = waker
        continuation.onTermination = { _ in waker.wake() }
        let work = Transfer((monitor, wakeReceiver))
        let group = finished
        group.enter()
        let thread = Thread.named("kinesia.monitor") {
            let (monitor, wakeReceiver) = work.take()
            SocketEventStream.run(monitor: monitor, wakeReceiver: wakeReceiver, continuation: continuation)
            monitor.close()
            wakeReceiver.close()
            waker.close()
            continuation.finish()
            group.leave()
        }
        thread.start()
    }

    deinit {
        stop()
    }

    private static func run(
        monitor: SocketMonitor, wakeReceiver: ZMQSocket,
        continuation: AsyncStream<SocketEvent>.Continuation
    ) {
        var poller = Poller()
        let eventsIndex = poller.add(monitor.reader, for: .readable)
        let wakeIndex = poller.add(wakeReceiver, for: .readable)
        while true {
            guard let ready = try? poller.poll(timeout: nil) else { return }
            if ready[wakeIndex].contains(.readable) { return }
            guard ready[eventsIndex].contains(.readable) else { continue }
            while let frames = try? monitor.reader.tryReceive() {
                guard let event = SocketEvent(frames: frames) else { continue }
                continuation.yield(event)
                if event.kind == .monitorStopped { return }
            }
        }
    }

    /// Stops the monitoring thread and waits for it to end; the stream then finishes. Safe from
    /// any thread, more than once.
    public func stop() {
        waker.wake()
        finished.wait()
    }
}

/// Moves a value that is not `Sendable` into another thread. The module's own invariant: the
/// sending side never touches the value again, and ``take()`` is called once, on the receiving
/// thread (libzmq sockets may migrate between threads with a memory barrier, which the thread
/// start provides).
struct Transfer<Value>: @unchecked Sendable {
    private let value: Value

    init(_ value: Value) {
        self.value = value
    }

    func take() -> Value {
        value
    }
}

private let endpointCounter = Atomic<Int>(0)

/// An inproc endpoint name unique in this process.
func uniqueInprocEndpoint(_ purpose: String) -> String {
    let number = endpointCounter.wrappingAdd(1, ordering: .relaxed).newValue
    return "inproc://kinesia.\(purpose).\(number)"
}
