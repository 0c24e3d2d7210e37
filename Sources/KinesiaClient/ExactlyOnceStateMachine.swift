public import KinesiaWire

/// The decisions of an exactly-once consumer, with no I/O: given messages received live, replayed
/// messages, replay ends and errors, announcements (heartbeats) and the time, it says what to
/// deliver, what to ask a replay server for, and what is lost for good.
///
/// Per stream (``ReplayStreamKey``) it keeps the next sequence number to deliver. A message
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

    /// Counters: `duplicates`, `replayed`, `deferred` (live messages not buffered for lack of
    /// room, fetched later), `requests`, `retries`, `serverGone` (servers that stopped answering
    /// and were given up on), `lost` (messages).
    public private(set) var counters: [String: Int] = [:]
    /// Where the application stands (only streams something was delivered of, plus the
    /// positions it was made with).
    public private(set) var cursor: ReplayCursor

    private struct Pending {
        var requestID: UInt32
        var request: ReplayRequest
        var sentAt: Duration
    }

    private struct StreamState {
        var next: UInt64
        /// Whether `UInt64.max` was delivered: nothing can follow it on this stream.
        var exhausted = false
        var buffer: [UInt64: Message] = [:]
        var endpoint: String?
        var announcedLast: UInt64?
        var suspectedTail: UInt64?
        /// The requests under way, oldest first (at most the machine's `maximumInFlight`).
        var pending: [Pending] = []
        /// Where what the requests under way ask for ends (exclusive).
        var requestedEnd: UInt64?
        /// The last sequence number the server said it holds (its last batch end).
        var serverLast: UInt64?
        /// Requests in a row that got no answer (a server that has gone).
        var unanswered = 0
        var holeSince: Duration?
        var unknownToServer = false
        /// Whether a message was dropped for lack of room since the last request was sent (a
        /// replayed one among them, maybe: the batch cannot tell what the server skipped).
        var deferredWhileAsking = false
    }

    private let start: ReplayStart
    private let accepts: [TopicPrefix]
    private let maximumBuffered: Int
    private let requestTimeout: Duration
    private let announcementTimeout: Duration
    private let maximumRetries: Int
    private let maximumInFlight: Int
    private var streams: [ReplayStreamKey: StreamState] = [:]
    private var requests: [UInt32: ReplayStreamKey] = [:]
    private var nextRequestID: UInt32 = 1

    /// Makes a machine.
    /// - Parameters:
    ///   - start: Where streams without a cursor position start.
    ///   - cursor: Positions to resume from (the last delivered sequence, per stream).
    ///   - accepts: The topics of interest (announced streams of other topics are ignored).
    ///   - maximumBuffered: The most live messages held per stream while a hole is filled.
    ///   - requestTimeout: A request without an answer for this long is sent again.
    ///   - announcementTimeout: A hole in a stream whose publisher announced no replay endpoint
    ///     for this long is reported lost.
    ///   - maximumRetries: Requests in a row without an answer after which the server is taken
    ///     for gone: the hole is reported lost (counted in `serverGone`) until the stream is
    ///     announced again.
    ///   - maximumInFlight: Batches asked for at once per stream (the client's credit): a long
    ///     catch-up is limited by the server's reading of its journal, not by round trips. Three
    ///     batches of 256 and their ends fit in the replay sockets' high-water mark (1,028).
    public init(
        start: ReplayStart, cursor: ReplayCursor = ReplayCursor(), accepts: [TopicPrefix] = [.everything],
        maximumBuffered: Int = 4096, requestTimeout: Duration = .seconds(3),
        announcementTimeout: Duration = .seconds(5), maximumRetries: Int = 3, maximumInFlight: Int = 3
    ) {
        self.start = start
        self.cursor = cursor
        self.accepts = accepts
        self.maximumBuffered = Swift.max(1, maximumBuffered)
        self.requestTimeout = requestTimeout
        self.announcementTimeout = announcementTimeout
        self.maximumRetries = Swift.max(1, maximumRetries)
        self.maximumInFlight = Swift.max(1, maximumInFlight)
    }

    /// The streams followed, with the next sequence number each expects.
    public var positions: [ReplayStreamKey: UInt64] { streams.mapValues(\.next) }

    /// A message of `key` numbered `sequence`: received `live` from the bus, or from a replay.
    public mutating func received(
        _ key: ReplayStreamKey, sequence: UInt64, message: Message, live: Bool, now: Duration
    ) -> [Action] {
        var actions: [Action] = []
        if streams[key] == nil {
            guard live else { return [] }  // a reply for a stream no longer followed
            streams[key] = StreamState(
                next: firstSequence(of: key, live: sequence), exhausted: cursor.delivered[key] == .max)
        }
        var state = streams.removeValue(forKey: key)!
        defer { streams[key] = state }
        if !live { count("replayed") }
        if sequence < state.next || state.exhausted {
            count("duplicates")
            return []
        }
        if sequence == state.next {
            deliver(key, sequence, message, in: &state, into: &actions)
            drain(key, &state, into: &actions)
        } else if state.buffer[sequence] != nil {
            count("duplicates")
        } else if state.buffer.count < maximumBuffered {
            state.buffer[sequence] = message
        } else {
            count("deferred")
            if !state.pending.isEmpty { state.deferredWhileAsking = true }
        }
        if state.next < (state.buffer.keys.min() ?? 0), state.holeSince == nil { state.holeSince = now }
        requestIfBehind(key, &state, now: now, into: &actions)
        return actions
    }

    /// A replay batch ended: ask for the next one when the stream is still behind.
    public mutating func replayEnded(_ end: ReplayBatchEnd, now: Duration) -> [Action] {
        guard let key = requests.removeValue(forKey: end.requestID),
            var state = streams.removeValue(forKey: key)
        else { return [] }
        defer { streams[key] = state }
        var actions: [Action] = []
        state.pending.removeAll { $0.requestID == end.requestID }
        if state.pending.isEmpty { state.requestedEnd = nil }
        state.unanswered = 0
        // The server's word on what it holds wins over any announcement (a forged heartbeat
        // with a `last` it cannot serve must not have the stream asked for again and again).
        state.announcedLast = end.last
        state.serverLast = end.last
        // A batch never goes past what the server holds.
        let endNext = Swift.min(end.next, end.last == .max ? .max : end.last + 1)
        if state.next < end.first, end.first <= endNext {
            skip(key, to: end.first, in: &state, into: &actions)
        }
        if state.next < endNext, !state.deferredWhileAsking {
            // The server went past these without sending them (a damaged journal record, never
            // served): asking again would get the same answer, for ever. They are lost.
            skip(key, to: endNext, in: &state, into: &actions)
        }
        if end.isStreamEnd, let lowest = state.buffer.keys.min(), state.next < lowest, state.next > end.last {
            // The server has nothing more, yet there is a hole before what was received live:
            // those messages are not to be had.
            skip(key, to: lowest, in: &state, into: &actions)
        }
        if end.count > 0 || end.isStreamEnd {
            requestIfBehind(key, &state, now: now, into: &actions)
        }
        return actions
    }

    /// A replay request was refused: what it asked for that cannot be had is reported lost.
    public mutating func replayFailed(_ failure: ReplayFailure, now: Duration) -> [Action] {
        guard let key = requests.removeValue(forKey: failure.requestID),
            var state = streams.removeValue(forKey: key)
        else { return [] }
        defer { streams[key] = state }
        var actions: [Action] = []
        state.pending.removeAll { $0.requestID == failure.requestID }
        if state.pending.isEmpty { state.requestedEnd = nil }
        state.unanswered = 0
        switch failure.code {
        case .notRetained:
            skip(key, to: failure.first, in: &state, into: &actions)
            requestIfBehind(key, &state, now: now, into: &actions)
        case .unknownStream, .malformedRequest, .unsupportedVersion:
            state.unknownToServer = true
            skipHole(key, &state, now: now, into: &actions)
        }
        return actions
    }

    /// A publisher's heartbeat: its replay endpoint and where each of its streams stands.
    /// Streams of accepted topics not followed yet are followed from here (``ReplayStart``).
    public mutating func announced(_ announcement: ReplayAnnouncement, now: Duration) -> [Action] {
        var actions: [Action] = []
        for info in announcement.streams where accepts.contains(where: { $0.matches(info.topic) }) {
            let key = ReplayStreamKey(topic: info.topic, stream: info.stream)
            var isNew = false
            if streams[key] == nil {
                isNew = true
                streams[key] = StreamState(
                    next: firstSequence(of: key, announcedLast: info.last),
                    exhausted: cursor.delivered[key] == .max)
            }
            var state = streams.removeValue(forKey: key)!
            state.endpoint = announcement.endpoint
            state.announcedLast = Swift.max(state.announcedLast ?? info.last, info.last)
            if isNew || !state.buffer.isEmpty {
                requestIfBehind(key, &state, now: now, into: &actions)
            } else if info.last >= state.next {
                // Behind an idle stream: ask when the next heartbeat still says so (the live
                // messages may simply be on their way).
                if let suspected = state.suspectedTail, suspected >= state.next {
                    state.suspectedTail = nil
                    requestIfBehind(key, &state, now: now, into: &actions)
                } else {
                    state.suspectedTail = info.last
                }
            } else {
                state.suspectedTail = nil
            }
            streams[key] = state
        }
        return actions
    }

    /// The passing of time: requests without an answer are sent again; holes in streams whose
    /// publisher never announced a replay endpoint are reported lost.
    public mutating func tick(now: Duration) -> [Action] {
        var actions: [Action] = []
        for key in streams.keys.sorted() {
            var state = streams.removeValue(forKey: key)!
            if let oldest = state.pending.first, now - oldest.sentAt >= requestTimeout {
                // The requests after it are behind it on the same connection: all again.
                for pending in state.pending { requests[pending.requestID] = nil }
                state.pending = []
                state.requestedEnd = nil
                state.unanswered += 1
                if state.unanswered >= maximumRetries {
                    // The server has gone: what it was to send cannot be had. Live messages go on;
                    // a later announcement of the stream (a server back) is asked again.
                    count("serverGone")
                    state.unanswered = 0
                    state.endpoint = nil
                    skipHole(key, &state, now: now, into: &actions)
                } else {
                    count("retries")
                    requestIfBehind(key, &state, now: now, into: &actions)
                }
            }
            if state.endpoint == nil, let since = state.holeSince, now - since >= announcementTimeout {
                skipHole(key, &state, now: now, into: &actions)
            }
            streams[key] = state
        }
        return actions
    }

    // MARK: - Decisions

    private func firstSequence(of key: ReplayStreamKey, live sequence: UInt64) -> UInt64 {
        if let delivered = cursor.delivered[key] { return delivered == .max ? .max : delivered + 1 }
        switch start {
        case .beginning: return 0
        case .now: return sequence
        case .sequence(let first): return first
        }
    }

    private func firstSequence(of key: ReplayStreamKey, announcedLast last: UInt64) -> UInt64 {
        if let delivered = cursor.delivered[key] { return delivered == .max ? .max : delivered + 1 }
        switch start {
        case .beginning: return 0
        case .now: return last == .max ? .max : last + 1
        case .sequence(let first): return first
        }
    }

    private mutating func deliver(
        _ key: ReplayStreamKey, _ sequence: UInt64, _ message: Message, in state: inout StreamState,
        into actions: inout [Action]
    ) {
        actions.append(.deliver(key, sequence: sequence, message: message))
        state.next = sequence == .max ? .max : sequence + 1
        state.exhausted = sequence == .max
        cursor.delivered[key] = sequence
    }

    private mutating func drain(
        _ key: ReplayStreamKey, _ state: inout StreamState, into actions: inout [Action]
    ) {
        while !state.exhausted, let message = state.buffer.removeValue(forKey: state.next) {
            deliver(key, state.next, message, in: &state, into: &actions)
        }
        if state.buffer.isEmpty || state.next == state.buffer.keys.min() { state.holeSince = nil }
    }

    /// Gives up on everything before `target` that is not buffered: delivers the buffered
    /// messages below it in order, reports the holes between them lost.
    private mutating func skip(
        _ key: ReplayStreamKey, to target: UInt64, in state: inout StreamState, into actions: inout [Action]
    ) {
        for sequence in state.buffer.keys.filter({ $0 < target }).sorted() {
            if sequence > state.next { lose(key, state.next..<sequence, into: &actions) }
            if sequence >= state.next {
                deliver(
                    key, sequence, state.buffer.removeValue(forKey: sequence)!, in: &state, into: &actions)
            } else {
                state.buffer[sequence] = nil
            }
        }
        if state.next < target {
            lose(key, state.next..<target, into: &actions)
            state.next = target
        }
        drain(key, &state, into: &actions)
    }

    /// Gives up on the hole before the first buffered message (or up to the announced last).
    /// A hole after the messages it delivers is waited for from `now` (a stream gone quiet
    /// sends nothing more that would start its wait).
    private mutating func skipHole(
        _ key: ReplayStreamKey, _ state: inout StreamState, now: Duration, into actions: inout [Action]
    ) {
        if let lowest = state.buffer.keys.min() {
            skip(key, to: lowest, in: &state, into: &actions)
        } else if let last = state.announcedLast, last >= state.next {
            skip(key, to: last == .max ? .max : last + 1, in: &state, into: &actions)
        }
        state.holeSince = state.next < (state.buffer.keys.min() ?? 0) ? now : nil
    }

    private mutating func lose(_ key: ReplayStreamKey, _ range: Range<UInt64>, into actions: inout [Action]) {
        guard !range.isEmpty else { return }
        counters["lost", default: 0].addSaturating(Int(clamping: range.width))
        actions.append(.lost(key, sequences: range))
    }

    private mutating func requestIfBehind(
        _ key: ReplayStreamKey, _ state: inout StreamState, now: Duration, into actions: inout [Action]
    ) {
        while state.pending.count < maximumInFlight, !state.exhausted {
            let lowest = state.buffer.keys.min()
            let behindLive = lowest.map { state.next < $0 } ?? false
            let behindAnnounced = state.announcedLast.map { state.next <= $0 } ?? false
            guard behindLive || behindAnnounced else { return }
            guard let endpoint = state.endpoint else { return }  // wait for the announcement
            if state.unknownToServer {
                skipHole(key, &state, now: now, into: &actions)
                return
            }
            // The next batch starts where the ones under way end; a hole is asked up to the
            // first message held after it, a quiet stream's tail one batch at a time.
            let from = Swift.max(state.next, state.requestedEnd ?? state.next)
            var limit = UInt64(ReplayFormat.maximumBatch)
            if let lowest, behindLive {
                guard from < lowest else { return }
                limit = Swift.min(limit, lowest - from)
            } else if !state.pending.isEmpty {
                // More batches at once only up to what the server itself said it holds (a
                // heartbeat's word is taken for one request at a time: a forged one costs one).
                guard let last = state.serverLast, from <= last else { return }
                limit = Swift.min(limit, last - from == .max ? limit : last - from + 1)
            }
            let id = nextRequestID
            nextRequestID = nextRequestID == UInt32.max ? 1 : nextRequestID + 1
            let request = ReplayRequest(
                requestID: id, topic: key.topic, stream: key.stream, from: from, limit: UInt32(limit))
            if state.pending.isEmpty { state.deferredWhileAsking = false }
            state.pending.append(Pending(requestID: id, request: request, sentAt: now))
            state.requestedEnd = from.addingReportingOverflow(limit).overflow ? .max : from + limit
            requests[id] = key
            count("requests")
            actions.append(.request(endpoint: endpoint, request))
        }
    }

    private mutating func count(_ name: String) { counters[name, default: 0].addSaturating(1) }
}
