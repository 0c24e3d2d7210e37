import CZeroMQ
import KinesiaSystem

/// Waits for messages on several sockets with one `poll(2)` of their `ZMQ_FD` descriptors,
/// asking a socket's `ZMQ_EVENTS` only when its descriptor cannot tell.
///
/// `zmq_poll` asks every socket's `ZMQ_EVENTS` before it sleeps and again after it wakes, and
/// each ask is two system calls (libzmq's `getpid` and a `poll` of the socket's mailbox): 14 a
/// wake-up for three sockets, which a loop that wakes for a pose or two (a worker at a camera's
/// pace, a pool worker's sessions) pays on every pose. Yet a socket's descriptor is
/// edge-triggered: once the socket has processed its commands (a receive that would block, an
/// `ZMQ_EVENTS` that finds nothing to read), the descriptor becomes readable when a message
/// comes. So a socket is *settled* when one of those said it had nothing, and only unsettled
/// ones are asked before the wait:
///
/// - every socket starts unsettled;
/// - ``wait(timeout:)`` asks each unsettled socket, and returns at once when one has a message
///   to read; otherwise it settles them all and sleeps in one `poll` of the descriptors, and
///   returns the sockets whose descriptor woke it (unsettled: the caller reads them);
/// - ``readToEnd(_:)`` settles a socket the caller received from until a receive found nothing;
/// - ``touched(_:)`` unsettles one the caller used otherwise (a send processes the socket's
///   commands too, which may leave a message to read with a quiet descriptor).
///
/// A plain descriptor (``addDescriptor(_:)``: a pipe a pose source reads) can be waited for
/// with the sockets, as `poll(2)` tells it.
///
/// A socket returned and not read to its end stays unsettled, and is asked again. Forgetting
/// ``touched(_:)`` after a send costs at most ``askInterval`` (or the wait's timeout when
/// longer), never a message: waits that time out ask every socket once they have waited that
/// long since the last ask (``foundOnTimeout`` counts what it finds), and nothing is taken from
/// a socket. Not at every timeout: a paced publisher waits for each pose's time, 60 timeouts a
/// second, and the ask was two of its eight system calls a pose.
///
/// ```swift
/// var waits = ZMQWaitSet()
/// let poses = waits.add(subscriber)
/// let ready = try waits.wait(timeout: .milliseconds(100))
/// if ready.contains(poses) {
///     while let frames = try subscriber.tryReceive() { handle(frames) }
///     waits.readToEnd(poses)
/// }
/// ```
public struct ZMQWaitSet {
    /// The sockets a ``ZMQWaitSet/wait(timeout:)`` found with a message to read (or whose
    /// descriptor woke it), by the index ``ZMQWaitSet/add(_:)`` returned.
    public struct Ready: Equatable, Sendable {
        fileprivate var bits: UInt64 = 0

        /// Whether the socket at `index` has a message to read.
        public func contains(_ index: Int) -> Bool { bits & (1 << UInt64(index)) != 0 }

        /// Whether no socket is ready (the timeout passed).
        public var isEmpty: Bool { bits == 0 }
    }

    /// The most sockets in a set (the bits of ``Ready``).
    public static let capacity = 64

    /// `nil` at the index of a plain descriptor (``addDescriptor(_:)``).
    private var sockets: [ZMQSocket?] = []
    private var descriptors = ReadablePoll()
    /// Bit `i`: socket `i` is settled (its descriptor tells when a message comes).
    private var settled: UInt64 = 0
    /// The timed-out waiting since the settled sockets were last asked (a look, `.zero`, counts
    /// a millisecond).
    private var timedOutSinceAsk: Duration = .zero

    /// How much timed-out waiting passes, at most, between two asks of the settled sockets: what
    /// a wake-up libzmq did not give costs a message, at most (or one timeout when longer).
    public static let askInterval: Duration = .milliseconds(100)

    /// An empty set.
    public init() {}

    /// The number of sockets and plain descriptors added.
    public var count: Int { sockets.count }

    /// Adds a socket, unsettled; it is waited for readable.
    ///
    /// - Returns: Its index in the ``Ready`` sets of ``wait(timeout:)``.
    /// - Throws: ``ZMQError/closed``, ``ZMQError/invalidArgument`` past ``capacity`` sockets.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket) throws(ZMQError) -> Int {
        guard sockets.count < Self.capacity else { throw ZMQError.invalidArgument }
        let descriptor = try socket.get(.fileDescriptor)
        sockets.append(socket)
        descriptors.add(descriptor)
        return sockets.count - 1
    }

    /// Removes the sockets added after the first `count` (those at indices `count` and later),
    /// keeping what the set knows of the others and ``foundOnTimeout``.
    public mutating func removeSockets(from count: Int) {
        let kept = min(max(count, 0), sockets.count)
        sockets.removeSubrange(kept...)
        descriptors.removeDescriptors(from: kept)
        settled &= kept == Self.capacity ? ~0 : (1 << UInt64(kept)) - 1
    }

    /// Adds a plain descriptor (a pipe, standard input), waited for readable as `poll(2)` tells
    /// (level-triggered: never asked, never settled).
    ///
    /// - Returns: Its index in the ``Ready`` sets of ``wait(timeout:)``.
    /// - Throws: ``ZMQError/invalidArgument`` past ``capacity`` entries or for a negative descriptor.
    @discardableResult
    public mutating func addDescriptor(_ descriptor: Int32) throws(ZMQError) -> Int {
        guard sockets.count < Self.capacity, descriptor >= 0 else { throw ZMQError.invalidArgument }
        sockets.append(nil)
        descriptors.add(descriptor)
        settled |= 1 << UInt64(sockets.count - 1)
        return sockets.count - 1
    }

    /// Says that socket `index` was received from until a receive found nothing: its descriptor
    /// tells when the next message comes.
    public mutating func readToEnd(_ index: Int) {
        settled |= 1 << UInt64(index)
    }

    /// Says that socket `index` was used otherwise (a send, a receive stopped before the end):
    /// it is asked before the next wait.
    public mutating func touched(_ index: Int) {
        guard sockets[index] != nil else { return }
        settled &= ~(1 << UInt64(index))
    }

    /// How many times a wait that timed out found, by asking, a settled socket with a message
    /// to read that its descriptor never told of: a use of the socket the set was not told of
    /// (``touched(_:)`` forgotten), or a wake-up libzmq did not give. Each cost the message at
    /// most the wait's timeout; without the look, it would have waited for the next message.
    public private(set) var foundOnTimeout = 0

    /// Waits until a socket may have a message to read, or `timeout` passes.
    ///
    /// Unsettled sockets are asked first; a socket whose descriptor is readable is returned
    /// with them even when one of them is ready (the descriptors are then looked at without
    /// sleeping), so a socket with a message is never passed over for another that is always
    /// ready. A wait that times out asks every settled socket before it returns once the waits
    /// that timed out since the last ask add up to ``askInterval`` (a look counts a millisecond):
    /// a wake-up missed for whatever reason delays a message by about that, or one timeout when
    /// longer, never more.
    ///
    /// An interrupted wait (`EINTR`) returns early, as a timeout.
    ///
    /// - Parameter timeout: The longest wait (rounded up to milliseconds); `.zero` only looks.
    /// - Returns: The sockets to read (unsettled until ``readToEnd(_:)``); empty when the
    ///   timeout passed and no socket has a message.
    /// - Throws: ``ZMQError/closed`` if a socket was closed, ``ZMQError/terminated``.
    public mutating func wait(timeout: Duration) throws(ZMQError) -> Ready {
        var ready = Ready()
        // Plain descriptors are always settled: only sockets are asked.
        for index in sockets.indices where settled & (1 << UInt64(index)) == 0 {
            if try hasMessage(index) {
                ready.bits |= 1 << UInt64(index)
            } else {
                settled |= 1 << UInt64(index)
            }
        }
        guard !sockets.isEmpty else { return ready }
        let woken: Bool
        do {
            woken = try descriptors.wait(timeout: ready.isEmpty ? timeout : .zero)
        } catch {
            // poll(2) of valid descriptors fails only for want of memory (ENOMEM).
            throw ZMQError(code: error.rawValue)
        }
        if woken {
            for index in sockets.indices where descriptors.isReadable(index) {
                ready.bits |= 1 << UInt64(index)
                if sockets[index] != nil { settled &= ~(1 << UInt64(index)) }
            }
        } else if ready.isEmpty {
            // Timed out: every socket is settled here; a message found now was not announced.
            timedOutSinceAsk += max(timeout, .milliseconds(1))
            guard timedOutSinceAsk >= Self.askInterval else { return ready }
            timedOutSinceAsk = .zero
            for index in sockets.indices where try hasMessage(index) {
                ready.bits |= 1 << UInt64(index)
                settled &= ~(1 << UInt64(index))
                foundOnTimeout += 1
            }
        }
        return ready
    }

    /// Whether socket `index` has a message to read (`ZMQ_EVENTS`; `false` for a plain
    /// descriptor).
    private func hasMessage(_ index: Int) throws(ZMQError) -> Bool {
        guard let socket = sockets[index] else { return false }
        return try socket.get(.readiness).contains(.readable)
    }
}
