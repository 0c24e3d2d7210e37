public import KinesiaBus
public import KinesiaMotion
public import KinesiaWire

/// Receives wire messages from the bus: a SUB socket connected to the broker's backend, its
/// prefixes subscribed, every message decoded and judged by a ``SequenceTracker`` per topic.
///
/// Decode errors never end the loop: each is counted by reason (``decodeErrors``, keyed by
/// ``WireError/code`` or `frameCount` for a message that is not two frames) and returned as
/// ``Delivery/malformed(topic:reason:)``. Duplicates and stale messages are counted by the
/// tracker and not delivered.
///
/// Not `Sendable`: use it on the thread that made it. The properties every message touches are
/// not checked for exclusive access at run time: no code of the caller runs inside its methods
/// (deliveries are returned, never handed to a callback), so no two accesses to them overlap.
///
/// ```swift
/// let subscriber = try BusSubscriber(context: context, bus: bus, prefixes: [.kind(.event)])
/// while let delivery = try subscriber.receive(timeout: .milliseconds(100)) {
///     if case .message(let message, _) = delivery { print(message.topic) }
/// }
/// ```
public final class BusSubscriber {
    /// The default receive high-water mark.
    public static let defaultHighWaterMark: Int32 = 10_000

    /// What one receive produced.
    public enum Delivery {
        /// A decoded message and what its sequence number says (never a duplicate or stale).
        case message(WireMessage, SequenceResult)
        /// A message that could not be decoded; `topic` is its first frame as text (lossy).
        case malformed(topic: String, reason: BusDecodeFailure)
        /// A pose decoded into flat form (only when ``decodesPosesFlat`` is set; otherwise poses
        /// come as ``message(_:_:)``), and what its sequence number says.
        case flatPose(topic: Topic, header: WireHeader, pose: FlatPose, SequenceResult)
    }

    /// Whether poses are decoded straight into a ``FlatPose`` and delivered as
    /// ``Delivery/flatPose(topic:header:pose:_:)`` (no dictionaries, no allocation), for a
    /// receiver that feeds ``MotionAnalyzer/process(_:)-(FlatPose)``. Other kinds still come as
    /// ``Delivery/message(_:_:)``. Off by default.
    @exclusivity(unchecked) public var decodesPosesFlat = false

    /// The socket (for a ``Poller``).
    public let socket: ZMQSocket
    /// The prefixes subscribed so far.
    public private(set) var prefixes: [TopicPrefix] = []
    /// Sequence numbers per topic: gaps, restarts, duplicates.
    @exclusivity(unchecked) public private(set) var tracker = SequenceTracker<Topic>()
    /// Messages that could not be decoded, per reason.
    public private(set) var decodeErrors: [String: Int] = [:]
    /// Messages received (decoded or not).
    @exclusivity(unchecked) public private(set) var received = 0

    @exclusivity(unchecked) private var frames: [[UInt8]] = []
    @exclusivity(unchecked) private var flat = FlatPose()
    private var pendingMonitor: SocketMonitor?

    /// Connects a subscriber to the bus's backend and subscribes `prefixes`.
    ///
    /// Frames larger than ``WireFormat/maximumFrameSize`` are refused (`ZMQ_MAXMSGSIZE`: the
    /// connection that carries one is dropped and made again), so the receive queue holds at
    /// most `highWaterMark` x that size: 160 MiB at the default.
    /// - Throws: ``ZMQError``.
    public init(
        context: ZMQContext, bus: BusAddress, prefixes: [TopicPrefix] = [],
        highWaterMark: Int32 = defaultHighWaterMark
    ) throws(ZMQError) {
        socket = try ZMQSocket(.sub, context: context)
        try socket.set(.receiveHighWaterMark, highWaterMark)
        // No frame larger than a valid message is ever stored (the broker is disconnected
        // instead): the queue holds at most highWaterMark x WireFormat.maximumFrameSize bytes.
        try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
        try socket.set(.reconnectIntervalMax, .seconds(1))
        try socket.secure(for: bus)
        for prefix in prefixes { try subscribe(prefix) }
        pendingMonitor = try socket.monitor([.handshakeSucceeded])
        try socket.connect(bus.subscriberEndpoint)
    }

    /// Subscribes one more prefix.
    public func subscribe(_ prefix: TopicPrefix) throws(ZMQError) {
        try socket.subscribe(prefix.bytes)
        prefixes.append(prefix)
    }

    /// Subscribes a prefix given as text by a user (`kinesia listen event/cam1/`); it need not
    /// be whole topic components (`event/cam1` also matches `event/cam10/...`).
    public func subscribe(text: String) throws(ZMQError) {
        try socket.subscribe(text)
    }

    /// Waits at most `timeout` for the connection to the broker (ZMTP handshake done): from
    /// then on the subscriptions are on their way, sent before anything else.
    /// - Returns: Whether the handshake was seen in time.
    public func waitForConnection(timeout: Duration) throws(ZMQError) -> Bool {
        guard let monitor = pendingMonitor else { return true }
        defer {
            // The monitoring stops before its reader closes (SocketMonitor.close() does both,
            // in that order): a handshake event sent to a closed reader blocks libzmq's I/O
            // thread, and with it every socket of the context, for good.
            monitor.close()
            pendingMonitor = nil
        }
        return try monitor.next(.handshakeSucceeded, timeout: timeout) != nil
    }

    /// Closes the socket.
    public func close() {
        pendingMonitor?.close()
        pendingMonitor = nil
        socket.close()
    }

    /// All decode errors.
    public var decodeErrorCount: Int { decodeErrors.values.reduce(0, +) }

    /// Receives the next delivery, waiting at most `timeout` (`nil`: without limit). Duplicates
    /// and stale messages are skipped (and counted by ``tracker``) without returning.
    /// - Returns: The delivery, or `nil` when nothing came in time.
    /// - Throws: ``ZMQError`` (``ZMQError/terminated`` when the context shuts down).
    public func receive(timeout: Duration?) throws(ZMQError) -> Delivery? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            if let delivery = try tryReceive() { return delivery }
            var wait: Duration? = nil
            if let deadline {
                wait = clock.now.duration(to: deadline)
                if wait! <= .zero { return nil }
            }
            var poller = Poller()
            poller.add(socket, for: .readable)
            _ = try poller.poll(timeout: wait)
        }
    }

    /// Receives a delivery only if one is waiting now (a pose as
    /// ``Delivery/flatPose(topic:header:pose:_:)`` when ``decodesPosesFlat`` is set). Duplicates
    /// and stale messages are skipped (counted by ``tracker``).
    public func tryReceive() throws(ZMQError) -> Delivery? {
        if decodesPosesFlat {
            switch try tryReceive(flatPoseInto: &flat) {
            case nil: return nil
            case .pose(let topic, let header, let result)?:
                return .flatPose(topic: topic, header: header, pose: flat, result)
            case .other(let delivery)?: return delivery
            }
        }
        while try socket.tryReceive(into: &frames) {
            received &+= 1
            guard frames.count == 2 else { return fail(.frameCount(frames.count)) }
            if let delivery = judgeMessage() { return delivery }
        }
        return nil
    }

    /// What ``tryReceive(flatPoseInto:)`` received.
    public enum FlatDelivery {
        /// A pose, decoded into the caller's ``FlatPose``, and what its sequence number says.
        case pose(topic: Topic, header: WireHeader, SequenceResult)
        /// Anything else: a message that is not a pose, or one that does not decode.
        case other(Delivery)
    }

    /// Receives a delivery only if one is waiting now, as ``tryReceive()`` does, but decodes a
    /// pose straight into `pose` (the caller's, reused from pose to pose), whatever
    /// ``decodesPosesFlat`` says: the worker's receive, which copies no pose (500 bytes) and
    /// runs none of the caller's code inside (a callback made the worker's loop check every
    /// access to its variables at run time).
    public func tryReceive(flatPoseInto pose: inout FlatPose) throws(ZMQError) -> FlatDelivery? {
        while try socket.tryReceive(into: &frames) {
            received &+= 1
            guard frames.count == 2 else { return .other(fail(.frameCount(frames.count))) }
            switch judgeFlat(into: &pose) {
            case .pose(let topic, let header, let result): return .pose(topic: topic, header: header, result)
            case .skipped: continue
            case .failed(let delivery): return .other(delivery)
            case .notPose: break
            }
            if let delivery = judgeMessage() { return .other(delivery) }
        }
        return nil
    }

    /// The received frames decoded as a ``WireMessage`` (`nil`: a duplicate or stale one).
    private func judgeMessage() -> Delivery? {
        let message: WireMessage
        do {
            message = try WireMessage.decode(topic: frames[0], payload: frames[1])
        } catch {
            return fail(.wire(error))
        }
        let result = tracker.record(message.header, on: message.topic)
        guard result.isDelivered else { return nil }
        return .message(message, result)
    }

    /// What the received frames are, decoded as a pose.
    private enum FlatJudgement {
        /// Not a pose: to be decoded as a ``WireMessage``.
        case notPose
        /// A duplicate or stale pose (counted by ``tracker``).
        case skipped
        /// Frames that do not decode.
        case failed(Delivery)
        /// A pose, decoded.
        case pose(Topic, WireHeader, SequenceResult)
    }

    /// Decodes the received frames as a pose into `pose`.
    private func judgeFlat(into pose: inout FlatPose) -> FlatJudgement {
        // A struct, not a tuple: a `Result` of a tuple instantiates its type's metadata at run
        // time, on every message.
        let decoded: Result<Envelope, WireError> = frames[0].withUnsafeBytes { topic in
            frames[1].withUnsafeBytes { (payload) -> Result<Envelope, WireError> in
                do throws(WireError) {
                    let (parsed, header) = try WireMessage.decodeEnvelope(topic: topic, payload: payload)
                    guard header.kind == .pose else {
                        return .success(Envelope(topic: parsed, header: header))
                    }
                    return .success(
                        Envelope(topic: parsed, header: try PoseCodec.decode(payload, into: &pose)))
                } catch {
                    return .failure(error)
                }
            }
        }
        switch decoded {
        case .failure(let error):
            return .failed(fail(.wire(error)))
        case .success(let envelope):
            guard envelope.header.kind == .pose else { return .notPose }
            let result = tracker.record(envelope.header, on: envelope.topic)
            guard result.isDelivered else { return .skipped }
            return .pose(envelope.topic, envelope.header, result)
        }
    }

    /// A received message's topic and header.
    private struct Envelope {
        var topic: Topic
        var header: WireHeader
    }

    private func fail(_ reason: BusDecodeFailure) -> Delivery {
        decodeErrors[reason.code, default: 0] += 1
        let topic = String(decoding: (frames.first ?? []).prefix(Topic.maximumLength), as: UTF8.self)
        return .malformed(topic: topic, reason: reason)
    }
}

/// Why a received message was not decoded.
public enum BusDecodeFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The message is not `[topic, payload]`: it has this many frames.
    case frameCount(Int)
    /// The frames do not decode.
    case wire(WireError)

    /// A stable name for counters: `frameCount`, or the ``WireError/code`` (`truncated`...).
    public var code: String {
        switch self {
        case .frameCount: "frameCount"
        case .wire(let error): error.code
        }
    }

    /// A sentence for people.
    public var description: String {
        switch self {
        case .frameCount(let count): "expected 2 frames (topic, payload), got \(count)"
        case .wire(let error): error.description
        }
    }
}
