import CZeroMQ
import Dispatch
import Foundation
import KinesiaSystem
import Synchronization

/// An XSUB/XPUB forwarder on its own thread, like `zmq_proxy`, that judges every message by its
/// sender before forwarding it: the broker's loop.
///
/// Messages received on the frontend (publishers) go to the backend (subscribers) unless
/// `filter` drops them; subscriptions received on the backend go up to the frontend; anything
/// else a subscriber sends is dropped and counted (``ForwarderStatistics/upstreamDropped``).
/// The filter sees each message's first frame and its sender's ZAP user id (`User-Id`
/// metadata, `nil` for a peer without one) and returns `0` to forward, or a slot number
/// (`1..<dropSlotCount`) under which the drop is counted.
///
/// With `fencesEpochs`, a message of three frames whose last is an epoch frame (`4b 45` and a
/// UInt64: a pool worker's session, wire format section 16) is judged by ``StreamEpochs`` on
/// its payload's stream id: below the highest epoch forwarded on that stream it is dropped
/// (``ForwarderStatistics/staleEpochs``), otherwise it is forwarded without that frame, so
/// subscribers always receive `[topic, payload]`. To read that last frame the forwarder holds
/// the first two (moved, not copied) until it arrives; every other message goes on as before.
///
/// It reads in batches (`ZMQ_DONTWAIT` until the socket is empty, at most 1024 messages per
/// side and turn) into one reused `zmq_msg_t`, so forwarding allocates nothing in Swift: the
/// cost per message is libzmq's, as in `zmq_proxy`, plus the filter. It waits with a
/// ``ZMQWaitSet``, not `zmq_poll`: a side read to its end is not asked again before the next
/// wait (`zmq_poll` asked both sides' `ZMQ_EVENTS` before and after each sleep, two system calls
/// each: without them the thread makes a third fewer system calls at 8 cameras).
///
/// ```swift
/// let forwarder = try ZMQForwarder(frontend: xsub, backend: xpub) { topic, userID in
///     topic.first == UInt8(ascii: "p") ? 0 : 1
/// }
/// let statistics = forwarder.statistics()   // published, delivered, dropped[1]...
/// forwarder.stop()
/// ```
public final class ZMQForwarder: Sendable {
    /// Decides one message: `0` forwards it, `n` in `1..<dropSlotCount` drops it and counts it
    /// in `dropped[n]`.
    public typealias Filter =
        @Sendable (_ topic: UnsafeRawBufferPointer, _ userID: UnsafePointer<CChar>?) -> Int

    /// The number of drop counters (slot 0 is never used).
    public static let dropSlotCount = 64

    /// How long, at most, a subscription waits unannounced while messages flow down (the loop
    /// asks the backend that often rather than after every message it sends there).
    static let subscriptionAsk: Duration = .milliseconds(10)
    /// Messages read from one side before the other side's turn.
    static let batchSize = 1024

    /// The frontend's bound endpoint (`ZMQ_LAST_ENDPOINT`), or empty.
    public let frontendEndpoint: String
    /// The backend's bound endpoint (`ZMQ_LAST_ENDPOINT`), or empty.
    public let backendEndpoint: String

    private let shared: Shared
    private let finished = DispatchGroup()

    private final class Shared: Sendable {
        let stopping = StopFlag()
        let statistics = Mutex(ForwarderStatistics())
        let ending = Mutex<ZMQError?>(nil)
        let running = Atomic<Bool>(true)
    }

    /// Starts forwarding between two sockets made, configured and bound by the caller; the
    /// forwarder takes them over and closes them when it ends.
    ///
    /// - Parameters:
    ///   - frontend: An XSUB (publishers connect to it).
    ///   - backend: An XPUB (subscribers connect to it).
    ///   - filter: Judges each message from the frontend; `nil` forwards everything.
    ///   - fencesEpochs: Whether epoch frames are read, judged and taken off (see the type).
    /// - Throws: ``ZMQError/closed`` if a socket was closed.
    public init(
        frontend: sending ZMQSocket, backend: sending ZMQSocket, filter: Filter? = nil,
        fencesEpochs: Bool = false
    )
        throws(ZMQError)
    {
        guard !frontend.isClosed, !backend.isClosed else { throw ZMQError.closed }
        frontendEndpoint = (try? frontend.get(.lastEndpoint)) ?? ""
        backendEndpoint = (try? backend.get(.lastEndpoint)) ?? ""
        let shared = Shared()
        self.shared = shared
        let work = Transfer((frontend, backend))
        let group = finished
        group.enter()
        let thread = Thread.named("kinesia.forwarder") {
            let (frontend, backend) = work.take()
            let error = Self.run(
                frontend: frontend, backend: backend, filter: filter, fencesEpochs: fencesEpochs,
                shared: shared)
            frontend.close()
            backend.close()
            shared.ending.withLock { $0 = error }
            shared.running.store(false, ordering: .releasing)
            group.leave()
        }
        thread.start()
    }

    deinit {
        stop()
    }

    /// Whether the forwarding thread still runs.
    public var isRunning: Bool { shared.running.load(ordering: .acquiring) }

    /// Why forwarding ended: `nil` while it runs and after ``stop()``; ``ZMQError/terminated``
    /// after its context was shut down.
    public var endingError: ZMQError? { shared.ending.withLock { $0 } }

    /// The counters so far (updated after every batch).
    public func statistics() -> ForwarderStatistics {
        shared.statistics.withLock { $0 }
    }

    /// Stops forwarding (within about 100 ms) and waits for the thread. Safe more than once.
    public func stop() {
        shared.stopping.set()
        finished.wait()
    }

    /// Waits until forwarding ends.
    public func wait() {
        finished.wait()
    }

    // MARK: - The loop

    private static func run(
        frontend: ZMQSocket, backend: ZMQSocket, filter: Filter?, fencesEpochs: Bool, shared: Shared
    )
        -> ZMQError?
    {
        guard let front = frontend.handle, let back = backend.handle else { return .closed }
        // The frame being read, then the topic and the payload held while an epoch frame may
        // follow them.
        let messages = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 3)
        for index in 0..<3 { zmq_msg_init(messages + index) }
        defer {
            for index in 0..<3 { zmq_msg_close(messages + index) }
            messages.deallocate()
        }
        var waits = ZMQWaitSet()
        let down: Int
        let up: Int
        do {
            down = try waits.add(frontend)
            up = try waits.add(backend)
        } catch {
            return error
        }
        var local = ForwarderStatistics()
        var loop = Loop(
            front: front, back: back, message: messages, heldTopic: messages + 1, heldPayload: messages + 2,
            filter: filter, epochs: fencesEpochs ? StreamEpochs() : nil)
        let clock = ContinuousClock()
        var upAsked = clock.now
        while !shared.stopping.isSet {
            do {
                let ready = try waits.wait(timeout: .milliseconds(100))
                // A side read to its end tells of its next message by its descriptor; sending on
                // the other side processed that side's commands, so it is asked before the next
                // wait (a subscription, or a message, may be there unannounced). Subscriptions
                // are asked for at most every `subscriptionAsk` while messages flow down (the
                // ask is two system calls): a subscription waits that long at most then, and
                // once they stop, until the set's look after timed-out waits (its askInterval).
                if ready.contains(down) {
                    if try loop.forwardDown(&local) { waits.readToEnd(down) }
                    let now = clock.now
                    if now - upAsked >= Self.subscriptionAsk {
                        waits.touched(up)
                        upAsked = now
                    }
                }
                if ready.contains(up) {
                    if try loop.forwardUp(&local) { waits.readToEnd(up) }
                    waits.touched(down)
                }
            } catch {
                shared.statistics.withLock { $0.assign(local) }
                return error
            }
            shared.statistics.withLock { $0.assign(local) }
        }
        return nil
    }

    /// The state of the forwarding thread: raw handles and the one reused message.
    private struct Loop {
        let front: UnsafeMutableRawPointer
        let back: UnsafeMutableRawPointer
        let message: UnsafeMutablePointer<zmq_msg_t>
        let heldTopic: UnsafeMutablePointer<zmq_msg_t>
        let heldPayload: UnsafeMutablePointer<zmq_msg_t>
        let filter: Filter?
        var epochs: StreamEpochs?

        /// Receives one frame without waiting: its size, or `nil` when none is there.
        @inline(__always)
        func receive(_ socket: UnsafeMutableRawPointer, wait: Bool) throws(ZMQError) -> Int? {
            while true {
                let size = zmq_msg_recv(message, socket, wait ? 0 : ZMQ_DONTWAIT)
                if size >= 0 { return Int(size) }
                let error = ZMQError.last()
                if error == .interrupted { continue }
                if error == .wouldBlock { return nil }
                throw error
            }
        }

        @inline(__always)
        func send(_ socket: UnsafeMutableRawPointer, more: Bool) throws(ZMQError) {
            try send(message, to: socket, more: more)
        }

        @inline(__always)
        func send(
            _ frame: UnsafeMutablePointer<zmq_msg_t>, to socket: UnsafeMutableRawPointer, more: Bool
        ) throws(ZMQError) {
            while zmq_msg_send(frame, socket, more ? ZMQ_SNDMORE : 0) < 0 {
                let error = ZMQError.last()
                if error == .interrupted { continue }
                throw error
            }
        }

        @inline(__always)
        var hasMore: Bool { zmq_msg_more(message) != 0 }

        /// Drops the rest of a message (its frames are already in the socket: no wait).
        @inline(__always)
        func discardRest() throws(ZMQError) -> Int {
            var bytes = 0
            while hasMore {
                guard let size = try receive(front, wait: true) else { break }
                bytes += size
            }
            return bytes
        }

        /// Publishers to subscribers, one batch at most. Returns whether it found the frontend empty.
        mutating func forwardDown(_ statistics: inout ForwarderStatistics) throws(ZMQError) -> Bool {
            for _ in 0..<ZMQForwarder.batchSize {
                guard let size = try receive(front, wait: false) else { return true }
                statistics.published &+= 1
                var bytes = size
                var verdict = 0
                if let filter {
                    let topic = UnsafeRawBufferPointer(start: zmq_msg_data(message), count: size)
                    verdict = filter(topic, zmq_msg_gets(message, userIDProperty))
                }
                guard verdict == 0 else {
                    let slot = min(max(verdict, 1), ZMQForwarder.dropSlotCount - 1)
                    statistics.dropped[slot] &+= 1
                    bytes += try discardRest()
                    statistics.publishedBytes &+= bytes
                    continue
                }
                var more = hasMore
                if more, epochs != nil {
                    switch try judgeEpoch(&statistics) {
                    case .done(let judged):
                        bytes += judged
                        statistics.publishedBytes &+= bytes
                        continue
                    case .rest(let judged):
                        bytes += judged
                        more = hasMore
                    }
                }
                try send(back, more: more)
                while more {
                    guard let next = try receive(front, wait: true) else { break }
                    bytes += next
                    more = hasMore
                    try send(back, more: more)
                }
                statistics.publishedBytes &+= bytes
                statistics.delivered &+= 1
                statistics.deliveredBytes &+= bytes
            }
            return false
        }

        /// What ``judgeEpoch(_:)`` did with a message whose topic frame is in ``message``.
        enum EpochJudgement {
            /// The message was forwarded (stripped of its epoch frame) or dropped as stale;
            /// these bytes were read after the topic.
            case done(Int)
            /// Not a message with an epoch frame: the frames before the one in ``message``
            /// were sent with more to come; ``message`` is to be sent next, then the rest.
            case rest(Int)
        }

        /// Reads the frames after a topic (in ``message``, with more to come): a payload and an
        /// epoch frame, and nothing after them, is judged by ``epochs`` and forwarded without
        /// the epoch frame (`[topic, payload]`) or dropped; anything else is left to be sent on
        /// as it is.
        mutating func judgeEpoch(_ statistics: inout ForwarderStatistics) throws(ZMQError) -> EpochJudgement {
            zmq_msg_move(heldTopic, message)
            guard let payloadSize = try receive(front, wait: true) else {
                zmq_msg_move(message, heldTopic)
                return .rest(0)
            }
            let topicSize = zmq_msg_size(heldTopic)
            guard hasMore else {
                try send(heldTopic, to: back, more: true)
                try send(back, more: false)
                statistics.delivered &+= 1
                statistics.deliveredBytes &+= topicSize &+ payloadSize
                return .done(payloadSize)
            }
            zmq_msg_move(heldPayload, message)
            guard let lastSize = try receive(front, wait: true) else {
                try send(heldTopic, to: back, more: true)
                zmq_msg_move(message, heldPayload)
                return .rest(payloadSize)
            }
            let epoch =
                hasMore
                ? nil
                : StreamEpochs.epoch(
                    inFrame: UnsafeRawBufferPointer(start: zmq_msg_data(message), count: lastSize))
            let stream = StreamEpochs.stream(
                ofPayload: UnsafeRawBufferPointer(start: zmq_msg_data(heldPayload), count: payloadSize))
            guard let epoch, let stream else {
                try send(heldTopic, to: back, more: true)
                try send(heldPayload, to: back, more: true)
                return .rest(payloadSize + lastSize)
            }
            guard epochs!.admit(stream: stream, epoch: epoch) else {
                statistics.staleEpochs &+= 1
                zmq_msg_close(heldTopic)
                zmq_msg_init(heldTopic)
                zmq_msg_close(heldPayload)
                zmq_msg_init(heldPayload)
                return .done(payloadSize + lastSize)
            }
            try send(heldTopic, to: back, more: true)
            try send(heldPayload, to: back, more: false)
            statistics.epochsForwarded &+= 1
            statistics.epochStreamsForgotten = epochs!.forgotten
            statistics.delivered &+= 1
            statistics.deliveredBytes &+= topicSize &+ payloadSize
            return .done(payloadSize + lastSize)
        }

        /// Subscriptions up to the publishers, one batch at most. Returns whether it found the
        /// backend empty.
        mutating func forwardUp(_ statistics: inout ForwarderStatistics) throws(ZMQError) -> Bool {
            for _ in 0..<ZMQForwarder.batchSize {
                guard let size = try receive(back, wait: false) else { return true }
                statistics.subscriptions &+= 1
                let first = size > 0 ? zmq_msg_data(message).load(as: UInt8.self) : 2
                guard !hasMore, first <= 1 else {
                    // Not a subscription: a subscriber may not publish.
                    statistics.upstreamDropped &+= 1
                    while hasMore { _ = try receive(back, wait: true) }
                    continue
                }
                try send(front, more: false)
                statistics.subscriptionsForwarded &+= 1
            }
            return false
        }
    }
}

/// `"User-Id"`, the metadata property of a ZAP user id, as a C string made once.
nonisolated(unsafe) private let userIDProperty: UnsafePointer<CChar> = UnsafePointer(strdup("User-Id")!)

/// The counters of a ``ZMQForwarder``.
public struct ForwarderStatistics: Hashable, Sendable {
    /// Messages received from publishers (forwarded or dropped).
    public var published = 0
    /// Their bytes (all frames).
    public var publishedBytes = 0
    /// Messages sent to subscribers (the XPUB; it drops for a subscriber at its high-water mark).
    public var delivered = 0
    /// Their bytes.
    public var deliveredBytes = 0
    /// Messages received from subscribers (subscriptions and anything else).
    public var subscriptions = 0
    /// Subscriptions forwarded to the publishers.
    public var subscriptionsForwarded = 0
    /// Messages from subscribers that were not subscriptions, dropped.
    public var upstreamDropped = 0
    /// Messages with an epoch frame forwarded (without it): a pool worker's session's.
    public var epochsForwarded = 0
    /// Messages dropped because their epoch was below one forwarded before on their stream.
    public var staleEpochs = 0
    /// How many times the epochs of every stream were forgotten (``StreamEpochs/capacity``).
    public var epochStreamsForgotten = 0
    /// Messages dropped by the filter, per slot (`dropped[0]` is unused).
    public var dropped = [Int](repeating: 0, count: ZMQForwarder.dropSlotCount)

    /// Counters at zero.
    public init() {}

    /// Copies `other` in place (no allocation once both arrays exist).
    mutating func assign(_ other: ForwarderStatistics) {
        published = other.published
        publishedBytes = other.publishedBytes
        delivered = other.delivered
        deliveredBytes = other.deliveredBytes
        subscriptions = other.subscriptions
        subscriptionsForwarded = other.subscriptionsForwarded
        upstreamDropped = other.upstreamDropped
        epochsForwarded = other.epochsForwarded
        staleEpochs = other.staleEpochs
        epochStreamsForgotten = other.epochStreamsForgotten
        for index in dropped.indices { dropped[index] = other.dropped[index] }
    }
}
