import Synchronization

/// Wakes a thread blocked in ``Poller/poll(timeout:)`` from any other thread: a connected pair
/// of inproc PAIR sockets, the sending one behind a lock.
///
/// ```swift
/// let (waker, receiver) = try ThreadWaker.make(context: context)
/// poller.add(receiver, for: .readable)   // on the thread that polls
/// waker.wake()                           // from any thread: its poll returns at once
/// ```
public final class ThreadWaker: Sendable {
    private let sender: Mutex<ZMQSocket?>

    private init(sender: sending ZMQSocket) {
        self.sender = Mutex(sender)
    }

    /// The waker, and the receiver to poll on the woken thread (poll it for `.readable`; the
    /// wake-ups it holds need not be read, but may be).
    /// - Throws: ``ZMQError`` when `context` cannot make the pair.
    public static func make(context: ZMQContext) throws(ZMQError) -> (ThreadWaker, ZMQSocket) {
        let endpoint = uniqueInprocEndpoint("waker")
        let receiver = try ZMQSocket(.pair, context: context)
        try receiver.bind(endpoint)
        let sender = try ZMQSocket(.pair, context: context)
        try sender.connect(endpoint)
        return (ThreadWaker(sender: sender), receiver)
    }

    /// Sends one wake-up, never blocking (one pending wake-up is enough).
    public func wake() {
        sender.withLock { socket in
            _ = try? socket?.trySend([[]])
        }
    }

    /// Closes the sender (called by the woken thread as it ends, so that the context can
    /// terminate without waiting for this object).
    public func close() {
        sender.withLock { socket in
            socket?.close()
            socket = nil
        }
    }
}
