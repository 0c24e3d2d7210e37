public import KinesiaWire

/// The decisions of an exactly-once consumer, with no I/O: given messages received live, replayed
/// messages, replay ends and errors, announcements (heartbeats) and the time, it says what to
/// deliver, what to ask a replay server for, and what is lost for good.
///
/// Each stream (``ReplayStreamKey``) is an ``OrderedDelivery`` (the machine routes messages,
/// replies and announcements to it, numbers its requests and keeps the cursor). Per stream it
/// keeps the next sequence number to deliver. A message
/// with that number is delivered, followed by the buffered ones that come after it; an older
/// one is a duplicate and dropped; a newer one is buffered (at most `maximumBuffered` per stream;
/// beyond that it is dropped, to be fetched by replay later) and a replay of the hole is asked
/// for, from the endpoint the stream's publisher announced, in requests of at most
/// ``ReplayFormat/maximumBatch`` entries, up to `maximumInFlight` under way per stream (the
/// client's credit: the next batches are asked for before the first one has come back). A batch
/// end that leaves the stream behind asks for more. An announcement whose `last` is ahead
/// of what was delivered, twice in a row, asks for the tail of a stream that went quiet.
/// Messages the server no longer holds, messages a batch went past without sending (damaged in
/// the server's journal), or a stream it does not know, are reported as
/// ``Action/lost(_:sequences:)`` and skipped, so that delivery goes on.
///
/// `Message` is what the caller delivers (a decoded ``BusMessage`` in ``ExactlyOnceMessages``);
/// the machine never looks inside it. Time is a `Duration` since any fixed origin, given by the
/// caller.
///
/// ```swift
/// var machine = ExactlyOnceStateMachine<String>(start: .beginning, accepts: [.kind(.event)])
/// for action in machine.announced(announcement, now: .seconds(1)) { perform(action) }
/// for action in machine.received(key, sequence: 7, message: "…", live: true, now: .seconds(1)) { ... }
/// ```
public struct ExactlyOnceStateMachine<Message> {
    /// What the caller must do.
    public enum Action {
        /// Hand `message` (sequence `sequence` of `key`) to the application, now, in this order.
        case deliver(ReplayStreamKey, sequence: UInt64, message: Message)
        /// Send `request` to the replay server at `endpoint`.
        case request(endpoint: String, ReplayRequest)
        /// These sequence numbers of `key` cannot be had: tell the application, go on.
        case lost(ReplayStreamKey, sequences: Range<UInt64>)
    }

    /// Counters of every stream together: `duplicates`, `replayed`, `deferred` (live messages
    /// not buffered for lack of room, fetched later), `requests`, `retries`, `serverGone`
    /// (servers that stopped answering and were given up on), `lost` (messages).
    public var counters: [String: Int] {
        var sum = OrderedDelivery<Message>.Counters()
        for stream in streams.values {
            let counts = stream.counters
            sum.duplicates.addSaturating(counts.duplicates)
            sum.replayed.addSaturating(counts.replayed)
            sum.deferred.addSaturating(counts.deferred)
            sum.requests.addSaturating(counts.requests)
            sum.retries.addSaturating(counts.retries)
            sum.serverGone.addSaturating(counts.serverGone)
            sum.lost.addSaturating(counts.lost)
            sum.cutBatches.addSaturating(counts.cutBatches)
        }
        return sum.named
    }
    /// Where the application stands (only streams something was delivered of, plus the
    /// positions it was made with).
    public private(set) var cursor: ReplayCursor

    private let start: ReplayStart
    private let accepts: [TopicPrefix]
    private let policy: OrderedDelivery<Message>.Policy
    private var streams: [ReplayStreamKey: OrderedDelivery<Message>] = [:]
    /// The stream of each request under way (or answered late: pruned on ``tick(now:)``).
    private var requests: [UInt32: ReplayStreamKey] = [:]
    private var numbers = OrderedDelivery<Message>.RequestNumbers()
    /// The actions of one stream's step, reused.
    private var streamActions: [OrderedDelivery<Message>.Action] = []

    /// Makes a machine.
    /// - Parameters:
    ///   - start: Where streams without a cursor position start.
    ///   - cursor: Positions to resume from (the last delivered sequence, per stream).
    ///   - accepts: The topics of interest (announced streams of other topics are ignored).
    ///   - maximumBuffered: The most live messages held per stream while a hole is filled.
    ///   - requestTimeout: A request without an answer for this long is sent again.
    ///   - announcementTimeout: A hole in a stream whose publisher announced no replay endpoint
    ///     for this long is reported lost.
    ///   - takeoverTimeout: How long a hole in a stream said to be moving to another process
    ///     (``moving(_:now:)``) waits for that process's announcement instead.
    ///   - maximumRetries: Requests in a row without an answer after which the server is taken
    ///     for gone (counted in `serverGone`): the hole waits for another announcement of the
    ///     stream (a pool worker's taker, a restarted worker) up to `takeoverTimeout` from the
    ///     first such silence, then is reported lost.
    ///   - maximumInFlight: Batches asked for at once per stream (the client's credit): a long
    ///     catch-up is limited by the server's reading of its journal, not by round trips. Three
    ///     batches of 256 and their ends fit in the replay sockets' high-water mark (1,028).
    public init(
        start: ReplayStart, cursor: ReplayCursor = ReplayCursor(), accepts: [TopicPrefix] = [.everything],
        maximumBuffered: Int = 4096, requestTimeout: Duration = .seconds(3),
        announcementTimeout: Duration = .seconds(5), takeoverTimeout: Duration = .seconds(30),
        maximumRetries: Int = 3, maximumInFlight: Int = 3
    ) {
        self.start = start
        self.cursor = cursor
        self.accepts = accepts
        policy = OrderedDelivery.Policy(
            maximumBuffered: maximumBuffered, requestTimeout: requestTimeout,
            announcementTimeout: announcementTimeout, takeoverTimeout: takeoverTimeout,
            maximumRetries: maximumRetries,
            maximumInFlight: maximumInFlight)
    }

    /// The streams followed, with the next sequence number each expects.
    public var positions: [ReplayStreamKey: UInt64] { streams.mapValues { $0.next ?? .max } }

    /// A message of `key` numbered `sequence`: received `live` from the bus, or from a replay.
    public mutating func received(
        _ key: ReplayStreamKey, sequence: UInt64, message: Message, live: Bool, now: Duration
    ) -> [Action] {
        if streams[key]?.takeInOrder(sequence: sequence, live: live) == true {
            cursor.delivered[key] = sequence
            return [.deliver(key, sequence: sequence, message: message)]
        }
        if streams[key] == nil {
            guard live else { return [] }  // a reply for a stream no longer followed
            streams[key] = OrderedDelivery(next: firstSequence(of: key, live: sequence), policy: policy)
        }
        return step(key) { stream, numbers, actions in
            stream.received(
                sequence: sequence, message: message, live: live, now: now, numbers: &numbers, into: &actions)
        }
    }

    /// A replay batch ended: ask for the next one when the stream is still behind.
    public mutating func replayEnded(_ end: ReplayBatchEnd, now: Duration) -> [Action] {
        guard let key = requests.removeValue(forKey: end.requestID), streams[key] != nil else { return [] }
        return step(key) { stream, numbers, actions in
            stream.replayEnded(end, now: now, numbers: &numbers, into: &actions)
        }
    }

    /// A replay request was refused: what it asked for that cannot be had is reported lost.
    public mutating func replayFailed(_ failure: ReplayFailure, now: Duration) -> [Action] {
        guard let key = requests.removeValue(forKey: failure.requestID), streams[key] != nil else {
            return []
        }
        return step(key) { stream, numbers, actions in
            stream.replayFailed(failure, now: now, numbers: &numbers, into: &actions)
        }
    }

    /// A publisher's heartbeat: its replay endpoint and where each of its streams stands.
    /// Streams of accepted topics not followed yet are followed from here (``ReplayStart``).
    public mutating func announced(_ announcement: ReplayAnnouncement, now: Duration) -> [Action] {
        var actions: [Action] = []
        for info in announcement.streams where accepts.contains(where: { $0.matches(info.topic) }) {
            let key = ReplayStreamKey(topic: info.topic, stream: info.stream)
            let followedNow = streams[key] == nil
            if followedNow {
                streams[key] = OrderedDelivery(
                    next: firstSequence(of: key, announcedLast: info.last), policy: policy)
            }
            actions += step(key) { stream, numbers, actions in
                stream.announced(
                    endpoint: announcement.endpoint, last: info.last, followedNow: followedNow, now: now,
                    numbers: &numbers, into: &actions)
            }
        }
        return actions
    }

    /// A publisher's heartbeat said these streams go on in another process (``MovingStream``: a
    /// pool session moved, or fenced at its worker's lease lapse): a hole in one of them that no
    /// replay endpoint is known for waits for the taker's announcement
    /// (``OrderedDelivery/moving(now:)``). Streams not followed are not followed for it.
    public mutating func moving(_ moved: [MovingStream], now: Duration) {
        for stream in moved {
            let key = ReplayStreamKey(topic: stream.topic, stream: stream.stream)
            streams[key]?.moving(now: now)
        }
    }

    /// The passing of time: requests without an answer are sent again; holes in streams whose
    /// publisher never announced a replay endpoint are reported lost.
    public mutating func tick(now: Duration) -> [Action] {
        var actions: [Action] = []
        for key in streams.keys.sorted() {
            actions += step(key) { stream, numbers, actions in
                stream.tick(now: now, numbers: &numbers, into: &actions)
            }
        }
        // Requests given up (sent again, or a server gone) are answered by nobody, or late.
        requests = requests.filter { id, key in streams[key]?.isPending(id) ?? false }
        return actions
    }

    // MARK: - Decisions

    /// Runs one step of `key`'s stream and says what it decided, for that stream: deliveries
    /// (moving the cursor), requests (remembered by number) and losses.
    private mutating func step(
        _ key: ReplayStreamKey,
        _ body: (
            inout OrderedDelivery<Message>, inout OrderedDelivery<Message>.RequestNumbers,
            inout [OrderedDelivery<Message>.Action]
        ) -> Void
    ) -> [Action] {
        guard var stream = streams.removeValue(forKey: key) else { return [] }
        streamActions.removeAll(keepingCapacity: true)
        body(&stream, &numbers, &streamActions)
        streams[key] = stream
        var actions: [Action] = []
        actions.reserveCapacity(streamActions.count)
        for action in streamActions {
            switch action {
            case .deliver(let sequence, let message):
                cursor.delivered[key] = sequence
                actions.append(.deliver(key, sequence: sequence, message: message))
            case .request(let endpoint, let id, let from, let limit):
                requests[id] = key
                actions.append(
                    .request(
                        endpoint: endpoint,
                        ReplayRequest(
                            requestID: id, topic: key.topic, stream: key.stream, from: from, limit: limit)))
            case .lost(let sequences):
                actions.append(.lost(key, sequences: sequences))
            }
        }
        return actions
    }

    /// Where a stream first seen live starts (`nil`: after `UInt64.max`, nothing).
    private func firstSequence(of key: ReplayStreamKey, live sequence: UInt64) -> UInt64? {
        if let delivered = cursor.delivered[key] { return delivered == .max ? nil : delivered + 1 }
        switch start {
        case .beginning: return 0
        case .now: return sequence
        case .sequence(let first): return first
        }
    }

    /// Where a stream first seen announced starts (`nil`: after `UInt64.max`, nothing).
    private func firstSequence(of key: ReplayStreamKey, announcedLast last: UInt64) -> UInt64? {
        if let delivered = cursor.delivered[key] { return delivered == .max ? nil : delivered + 1 }
        switch start {
        case .beginning: return 0
        case .now: return last == .max ? nil : last + 1
        case .sequence(let first): return first
        }
    }
}
