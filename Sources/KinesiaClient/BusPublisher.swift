import Foundation
public import KinesiaBus
public import KinesiaMotion
public import KinesiaSystem
public import KinesiaWire

/// Publishes wire messages on the bus: connected to the broker's frontend, one stream id per
/// process start, a sequence number per topic, payloads encoded into reused buffers.
///
/// Two modes:
/// - a plain PUB (workers, the broker's own health): sends never wait; at the high-water mark
///   libzmq drops, and the receivers see the gap in the sequence numbers. One made with
///   `awaitsForwardedSubscriptions` (a pool session, whose first message, its run's start, goes
///   out at once) is an XPUB without `ZMQ_XPUB_NODROP`, sending as a PUB does, so that it can
///   see the subscriptions the broker forwards on connection arrive before its first message
///   (a PUB drops what it sends before them, and live consumers never get it again);
/// - ``waitsForSubscribers``: an XPUB with `ZMQ_XPUB_NODROP` (ingest). It sees the
///   subscriptions that the broker forwards upstream, so it can wait until someone subscribes
///   (``waitForSubscriber(to:timeout:isCancelled:clock:)``), and a send that would exceed the
///   high-water mark is refused (``publish(_:on:)`` returns `false`) instead of dropped silently;
///   the caller decides whether to pause and retry or to drop and count.
///
/// Not `Sendable`: use it on the thread that made it, like its socket.
///
/// ```swift
/// let publisher = try BusPublisher(context: context, bus: bus)
/// try publisher.publish(pose, on: Topic.pose(camera: "cam0"))
/// try publisher.publish(json: line, kind: .event, on: Topic.event(camera: "cam0", session: "left"))
/// ```
public final class BusPublisher {
    /// The default send high-water mark (messages queued towards the broker).
    public static let defaultHighWaterMark: Int32 = 10_000

    /// This process's stream id (random per process start).
    public var streamID: StreamID { encoder.streamID }
    /// Whether the socket is an XPUB that tracks subscriptions and refuses sends at the HWM.
    public let waitsForSubscribers: Bool
    /// The socket (for a ``Poller``).
    public let socket: ZMQSocket
    /// Called with every message after it is encoded and before it is sent: its topic, its
    /// header and its frames, byte for byte (a journal records them there, so that what is
    /// journaled is what was published, and before it was).
    public var beforeSend: ((_ topic: Topic, _ header: WireHeader, _ frames: [[UInt8]]) -> Void)?

    /// The epoch of the assignment this publisher's messages are sent under (a pool worker's
    /// session), or `nil`. When set, every event, snapshot and run record (kinds 2, 3 and 5) is
    /// sent with a third frame, ``EpochFrame``, after its payload: the broker refuses one below
    /// an epoch it already forwarded on the stream, and forwards the others without that frame
    /// (wire format, section 16). Poses and health reports never carry it, and ``beforeSend``
    /// (the journal) sees only `[topic, payload]`.
    public var epoch: UInt64? {
        didSet { epochFrame = epoch.map(EpochFrame.encode) ?? [] }
    }

    private var encoder: WireEncoder
    /// When a send next reads the subscriptions the broker forwarded (XPUB): they are drained
    /// now and then, not before every message (each read is a receive of libzmq's, two system
    /// calls a pose at a camera's pace); ``hasSubscriber(to:)`` reads them whenever it is asked.
    private var nextSubscriptionRead = ContinuousClock.now
    /// How often, at most, sends read the subscriptions.
    static let subscriptionReadInterval: Duration = .milliseconds(100)
    private var frames: [[UInt8]] = [[], []]
    private var epochFrame: [UInt8] = []
    /// `[topic, payload, epoch]` while a message with an epoch is sent: the first two swapped
    /// in from ``frames`` and back, never copied.
    private var framesWithEpoch: [[UInt8]] = [[], [], []]
    private var lastCarriesEpoch = false
    private var subscriptions: [[UInt8]: Int] = [:]
    private var incoming: [[UInt8]] = []

    /// Connects a publisher to the bus's frontend.
    /// - Parameters:
    ///   - context: The process's context.
    ///   - bus: The bus.
    ///   - waitsForSubscribers: XPUB with subscriptions and no silent drop (see the type).
    ///   - highWaterMark: `ZMQ_SNDHWM`.
    ///   - linger: How long closing keeps unsent messages.
    ///   - streamID: The stream id (random by default).
    ///   - awaitsForwardedSubscriptions: With a `connectionTimeout`: an XPUB (see the type) that
    ///     also waits, at most ``subscriptionWait`` after its handshake, for the subscriptions
    ///     the broker forwards on connection.
    ///   - connectionTimeout: When set, waits at most this long for the connection to the
    ///     broker (ZMTP handshake) before returning, so that the subscriptions the broker
    ///     forwards on connection arrive before the first message (a worker uses it).
    /// - Throws: ``ZMQError`` when the socket cannot be made or connected.
    public init(
        context: ZMQContext, bus: BusAddress, waitsForSubscribers: Bool = false,
        highWaterMark: Int32 = defaultHighWaterMark, linger: Duration = .milliseconds(500),
        streamID: StreamID = .random(), connectionTimeout: Duration? = nil,
        awaitsForwardedSubscriptions: Bool = false
    ) throws(ZMQError) {
        encoder = WireEncoder(streamID: streamID)
        self.waitsForSubscribers = waitsForSubscribers
        socket = try ZMQSocket(
            waitsForSubscribers || (awaitsForwardedSubscriptions && connectionTimeout != nil) ? .xpub : .pub,
            context: context, linger: linger)
        try socket.set(.sendHighWaterMark, highWaterMark)
        // Subscriptions are the only frames a publisher receives: none is larger than a topic,
        // but nothing larger than a valid message is ever stored.
        try socket.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
        if waitsForSubscribers {
            try socket.set(.xpubNoDrop, true)
        }
        try socket.set(.reconnectIntervalMax, .seconds(1))
        try socket.secure(for: bus)
        if let connectionTimeout {
            let monitor = try socket.monitor([.handshakeSucceeded])
            defer { monitor.close() }
            try socket.connect(bus.publisherEndpoint)
            let clock = ContinuousClock()
            let connected = clock.now
            _ = try monitor.next(.handshakeSucceeded, timeout: connectionTimeout)
            try socket.stopMonitoring()
            if awaitsForwardedSubscriptions, !waitsForSubscribers {
                let left = connectionTimeout - (clock.now - connected)
                try awaitForwardedSubscriptions(within: max(.zero, min(left, Self.subscriptionWait)))
            }
        } else {
            try socket.connect(bus.publisherEndpoint)
        }
    }

    /// Closes the socket (unsent messages are kept for the linger given at creation).
    public func close() { socket.close() }

    /// The last sequence number sent on `topic`, or `nil`.
    public func lastSequence(on topic: Topic) -> UInt64? { encoder.lastSequence(on: topic) }

    /// The header of the last message handed to the socket by a `publish` (queued or not),
    /// `nil` before the first: its topic's sequence number without a lookup.
    public private(set) var lastHeader: WireHeader?

    /// The stream id of `topic`'s messages (``streamID`` unless ``continueStream(_:on:after:)``
    /// set another).
    public func streamID(on topic: Topic) -> StreamID { encoder.streamID(on: topic) }

    /// Publishes `topic`'s messages on `stream`, numbered on after `lastSequence`
    /// (``WireEncoder/continueStream(_:on:after:)``): a stream identity kept across restarts.
    public func continueStream(_ stream: StreamID, on topic: Topic, after lastSequence: UInt64?) {
        encoder.continueStream(stream, on: topic, after: lastSequence)
    }

    /// Publishes a pose.
    /// - Returns: `true` when queued; `false` when an XPUB publisher is at its high-water mark
    ///   (nothing was sent, but the sequence number was used: receivers will see a gap if the
    ///   caller gives up rather than ``resend()``).
    /// - Throws: ``BusPublishError/message(_:)`` for a pose that cannot be encoded (NaN...: no
    ///   sequence number is used), ``BusPublishError/socket(_:)``.
    @discardableResult
    public func publish(_ pose: Pose, on topic: Topic) throws(BusPublishError) -> Bool {
        let header: WireHeader
        do {
            header = try encoder.encode(pose, on: topic, frames: &frames)
        } catch {
            throw .message(error)
        }
        return try send(topic, header)
    }

    /// Publishes JSON (an event, a snapshot or a health report) on `topic`.
    /// - Returns: As ``publish(_:on:)``.
    /// - Throws: ``BusPublishError/message(_:)`` (empty, oversized...),
    ///   ``BusPublishError/socket(_:)``.
    @discardableResult
    public func publish(json: [UInt8], kind: PayloadKind, on topic: Topic) throws(BusPublishError) -> Bool {
        guard topic.kind.payloadKind == kind else {
            throw .message(.topicMismatch(topic: topic.kind, payload: kind))
        }
        let header: WireHeader
        do {
            header = try encoder.encode(json: json, on: topic, frames: &frames)
        } catch {
            throw .message(error)
        }
        return try send(topic, header)
    }

    /// Publishes JSON text.
    @discardableResult
    public func publish(json: String, kind: PayloadKind, on topic: Topic) throws(BusPublishError) -> Bool {
        try publish(json: Array(json.utf8), kind: kind, on: topic)
    }

    /// Publishes a health report.
    @discardableResult
    public func publish(_ report: HealthReport, on topic: Topic) throws(BusPublishError) -> Bool {
        let json: [UInt8]
        do {
            json = try report.json()
        } catch {
            throw .message(error)
        }
        return try publish(json: json, kind: .health, on: topic)
    }

    /// Tries again to send the last message that ``publish(_:on:)`` could not queue (same
    /// sequence number).
    /// - Returns: Whether it was queued this time.
    /// - Throws: ``BusPublishError/socket(_:)``.
    public func resend() throws(BusPublishError) -> Bool {
        readSubscriptionsIfDue()
        return try transmit()
    }

    private func send(_ topic: Topic, _ header: WireHeader) throws(BusPublishError) -> Bool {
        lastHeader = header
        lastCarriesEpoch = !epochFrame.isEmpty && Self.carriesEpoch(header.kind)
        beforeSend?(topic, header, frames)
        readSubscriptionsIfDue()
        return try transmit()
    }

    /// Whether messages of `kind` carry the ``epoch``: a session's (events, snapshots, runs).
    private static func carriesEpoch(_ kind: PayloadKind) -> Bool {
        kind == .event || kind == .snapshot || kind == .session
    }

    /// Sends the last message encoded, with the epoch frame when it carries one.
    private func transmit() throws(BusPublishError) -> Bool {
        guard lastCarriesEpoch else {
            do {
                return try socket.trySend(frames)
            } catch {
                throw .socket(error)
            }
        }
        swap(&frames[0], &framesWithEpoch[0])
        swap(&frames[1], &framesWithEpoch[1])
        swap(&epochFrame, &framesWithEpoch[2])
        defer {
            swap(&frames[0], &framesWithEpoch[0])
            swap(&frames[1], &framesWithEpoch[1])
            swap(&epochFrame, &framesWithEpoch[2])
        }
        do {
            return try socket.trySend(framesWithEpoch)
        } catch {
            throw .socket(error)
        }
    }

    // MARK: - Subscriptions (XPUB only)

    /// How long a publisher made with `awaitsForwardedSubscriptions` waits, after its handshake, for the
    /// broker's first forwarded subscription (none comes when nobody subscribes at all).
    public static let subscriptionWait: Duration = .milliseconds(250)

    /// Waits at most `wait` for the first subscription the broker forwards, then reads what
    /// else of that batch has come within 10 ms.
    private func awaitForwardedSubscriptions(within wait: Duration) throws(ZMQError) {
        guard try socket.receive(timeout: wait) != nil else { return }
        while try socket.receive(timeout: .milliseconds(10)) != nil {}
    }

    /// Reads and forgets the subscription messages queued on a publisher made with
    /// `awaitsForwardedSubscriptions` (an XPUB that keeps none: libzmq queues each new one for the
    /// application until read). ``HealthPublisher`` calls it at each report.
    public func discardSubscriptions() {
        guard !waitsForSubscribers, socket.type == .xpub else { return }
        while (try? socket.tryReceive(into: &incoming)) == true {}
    }

    /// Reads the subscription messages waiting on an XPUB socket (never waits).
    public func readSubscriptions() {
        guard waitsForSubscribers else { return }
        while (try? socket.tryReceive(into: &incoming)) == true {
            guard let frame = incoming.first, let flag = frame.first else { continue }
            let prefix = Array(frame.dropFirst())
            if flag == 1 {
                subscriptions[prefix, default: 0] += 1
            } else if flag == 0, let count = subscriptions[prefix] {
                subscriptions[prefix] = count > 1 ? count - 1 : nil
            }
        }
    }

    /// ``readSubscriptions()`` when ``subscriptionReadInterval`` has passed since a send last did.
    private func readSubscriptionsIfDue() {
        guard waitsForSubscribers else { return }
        let now = ContinuousClock.now
        guard now >= nextSubscriptionRead else { return }
        nextSubscriptionRead = now + Self.subscriptionReadInterval
        readSubscriptions()
    }

    /// Whether a subscription that matches `topic` has reached this XPUB publisher (always
    /// `true` for a plain PUB, which cannot tell).
    public func hasSubscriber(to topic: Topic) -> Bool {
        guard waitsForSubscribers else { return true }
        readSubscriptions()
        let bytes = topic.bytes
        return subscriptions.keys.contains { bytes.starts(with: $0) }
    }

    /// Waits until a subscription matching `topic` arrives (XPUB only).
    /// - Parameters:
    ///   - topic: The topic to be sent.
    ///   - timeout: The longest wait.
    ///   - isCancelled: Checked about every 50 ms; the wait ends when it returns `true`.
    ///   - clock: What the timeout is timed on, from now (on a ``ManualClock`` in tests; read at
    ///     least every 50 ms).
    /// - Returns: Whether a subscriber is there.
    /// - Throws: ``ZMQError`` when the socket cannot be polled.
    public func waitForSubscriber(
        to topic: Topic, timeout: Duration, isCancelled: () -> Bool = { false },
        clock elapsed: ElapsedClock = ElapsedClock(ContinuousClock())
    ) throws(ZMQError) -> Bool {
        let wait = TimedWait(limit: timeout, startedAt: elapsed.now)
        while true {
            if hasSubscriber(to: topic) { return true }
            guard let remaining = wait.remaining(at: elapsed.now), !isCancelled() else { return false }
            var poller = Poller()
            poller.add(socket, for: .readable)
            _ = try poller.poll(timeout: min(remaining, .milliseconds(50)))
        }
    }
}
