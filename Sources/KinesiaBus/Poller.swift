import CZeroMQ

/// Readiness of a socket or file descriptor, as `zmq_poll` and `ZMQ_EVENTS` report it.
public struct PollEvents: OptionSet, Hashable, Sendable {
    /// libzmq's bits (`ZMQ_POLLIN`, `ZMQ_POLLOUT`, `ZMQ_POLLERR`).
    public let rawValue: Int16

    /// Makes a set from libzmq's bits (`ZMQ_POLLIN`...).
    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// A message can be received without blocking (`ZMQ_POLLIN`).
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent without blocking (`ZMQ_POLLOUT`).
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a plain file descriptor (`ZMQ_POLLERR`).
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}

/// Waits for any of several sockets (or file descriptors) to become ready (`zmq_poll`).
///
/// A poller refers to its sockets, so it is used on their thread, like them.
///
/// ```swift
/// var poller = Poller()
/// let commands = poller.add(control, for: .readable)
/// let poses = poller.add(subscriber, for: .readable)
/// let ready = try poller.poll(timeout: .milliseconds(100))
/// if ready[poses].contains(.readable) { ... }
/// ```
public struct Poller {
    private enum Item {
        case socket(ZMQSocket, PollEvents)
        case fileDescriptor(Int32, PollEvents)
    }

    private var items: [Item] = []

    /// Makes an empty poller.
    public init() {}

    /// The number of items added.
    public var count: Int { items.count }

    /// Adds a socket to watch for `events`.
    ///
    /// - Returns: The item's index in the array ``poll(timeout:)`` returns.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket, for events: PollEvents = .readable) -> Int {
        items.append(.socket(socket, events))
        return items.count - 1
    }

    /// Adds a plain file descriptor (a pipe, a signal fd...) to watch for `events`.
    ///
    /// - Returns: The item's index in the array ``poll(timeout:)`` returns.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, for events: PollEvents = .readable) -> Int {
        items.append(.fileDescriptor(fileDescriptor, events))
        return items.count - 1
    }

    /// Waits until at least one item is ready or the timeout passes.
    ///
    /// An interrupted wait (`EINTR`) is resumed for the time that remains.
    ///
    /// - Parameter timeout: The longest wait (rounded up to milliseconds); `nil` waits without
    ///   limit, `.zero` only looks.
    /// - Returns: The readiness of each item, in the order they were added (empty sets for the
    ///   ones not ready; all empty when the timeout passed).
    /// - Throws: ``ZMQError/closed`` if a socket was closed, ``ZMQError/terminated``.
    public func poll(timeout: Duration?) throws(ZMQError) -> [PollEvents] {
        var raw: [zmq_pollitem_t] = []
        raw.reserveCapacity(items.count)
        for item in items {
            switch item {
            case .socket(let socket, let events):
                guard let handle = socket.handle else { throw ZMQError.closed }
                raw.append(zmq_pollitem_t(socket: handle, fd: -1, events: events.rawValue, revents: 0))
            case .fileDescriptor(let fd, let events):
                raw.append(zmq_pollitem_t(socket: nil, fd: fd, events: events.rawValue, revents: 0))
            }
        }
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        let count = Int32(raw.count)
        while true {
            let milliseconds: Int =
                if let deadline { Int(millisecondsClamped(clock.now.duration(to: deadline))) } else { -1 }
            let result = raw.withUnsafeMutableBufferPointer { buffer in
                zmq_poll(buffer.baseAddress, count, milliseconds)
            }
            if result >= 0 { break }
            let error = ZMQError.last()
            if error == .interrupted { continue }
            throw error
        }
        return raw.map { PollEvents(rawValue: $0.revents) }
    }
}
