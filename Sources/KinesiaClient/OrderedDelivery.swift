public import KinesiaWire

/// Ordered delivery of one numbered stream, with no I/O: messages received live or replayed,
/// replay ends and refusals, announcements of where the publisher stands, and the time go in;
/// what to deliver, what to ask the stream's replay server for, and what is lost for good come
/// out: what the clients' exactly-once delivery (``ExactlyOnceStateMachine``) does for each
/// stream it follows.
///
/// It keeps the next sequence number to deliver. A message with that number is delivered,
/// followed by the buffered ones after it; an older one is a duplicate and dropped; a newer one
/// is buffered (at most ``Policy/maximumBuffered``; beyond that it is dropped, to be fetched by
/// replay later) and the hole before it is asked for, in requests of at most
/// ``ReplayFormat/maximumBatch`` messages, up to ``Policy/maximumInFlight`` under way (the
/// consumer's credit). A batch end that leaves the stream behind asks for more; an announcement
/// whose `last` is ahead of what was delivered, twice in a row, asks for the tail of a stream
/// that went quiet. Messages the server no longer holds,
/// messages a batch went past without sending (damaged in the server's journal), a stream the
/// server does not know, a server that stopped answering, or a hole no server was announced for
/// within ``Policy/announcementTimeout`` are reported as ``Action/lost(_:)`` and skipped, so
/// that delivery goes on.
///
/// Live first, when the policy sets a ``Policy/holeWait`` (the worker's pose feed,
/// ``PoseFeed``-like consumers that cannot wait): a hole before buffered messages is waited for
/// at most that long from the arrival of the first message after it, then given up (lost, the
/// buffered messages delivered); a tail asked for with nothing after it is waited for as long,
/// then left where it is (nothing past it was delivered, so nothing is given up).
///
/// Time is a `Duration` since any fixed origin, given by the caller; so are the request
/// numbers (``RequestNumbers``: one counter for all the streams of a consumer, so that a reply
/// names its request alone).
///
/// ```swift
/// var numbers = OrderedDelivery<String>.RequestNumbers()
/// var stream = OrderedDelivery<String>(next: 0)
/// var actions: [OrderedDelivery<String>.Action] = []
/// stream.announced(endpoint: "ipc:///run/kinesia/replay/w1.sock", last: 9, now: .seconds(1),
///                  numbers: &numbers, into: &actions)
/// stream.received(sequence: 7, message: "…", live: true, now: .seconds(1), numbers: &numbers, into: &actions)
/// ```
public struct OrderedDelivery<Message> {
    /// What the caller must do, in order.
    public enum Action {
        /// Hand `message` (number `sequence`) to the application, now, in this order.
        case deliver(sequence: UInt64, message: Message)
        /// Ask the replay server at `endpoint` for `limit` messages from `from`, as request `id`.
        case request(endpoint: String, id: UInt32, from: UInt64, limit: UInt32)
        /// These sequence numbers cannot be had: tell the application, go on.
        case lost(Range<UInt64>)
    }

    /// The request numbers of a consumer: each request of any of its streams takes the next
    /// (never 0; after `UInt32.max`, 1 again).
    public struct RequestNumbers: Sendable {
        private var next: UInt32 = 1

        /// Numbers from 1.
        public init() {}

        /// The next number.
        public mutating func take() -> UInt32 {
            defer { next = next == .max ? 1 : next + 1 }
            return next
        }
    }

    /// How long and how much a stream waits.
    public struct Policy: Sendable {
        /// The most live messages held while a hole is filled.
        public var maximumBuffered: Int
        /// A request without an answer for this long is sent again (with the ones after it).
        public var requestTimeout: Duration
        /// A hole in a stream whose publisher announced no replay endpoint for this long is lost.
        public var announcementTimeout: Duration
        /// How long a hole in a stream said to be moving to another process (``moving(now:)``)
        /// waits for that process's announcement, from when it was said, when no endpoint is
        /// known: a takeover's time (the coordinator's lease, its absence, a rebuild).
        public var takeoverTimeout: Duration
        /// Requests in a row without an answer after which the server is taken for gone
        /// (counted in `serverGone`): without a ``holeWait`` the hole waits for another
        /// announcement of the stream up to ``takeoverTimeout`` from the first such silence,
        /// then is lost; with one, it is lost at once.
        public var maximumRetries: Int
        /// Batches asked for at once (the consumer's credit).
        public var maximumInFlight: Int
        /// How long a hole before buffered messages (or a tail asked for) is waited for, at most,
        /// before it is given up (`nil`: until the server answers, as exactly-once consumers do).
        public var holeWait: Duration?
        /// Whether a batch that ends short of the buffered messages (a reply that predates them)
        /// is asked for once more before the hole is lost.
        public var asksAgainBeforeLosingHeld: Bool

        /// A policy; every value has the exactly-once consumer's default.
        public init(
            maximumBuffered: Int = 4096, requestTimeout: Duration = .seconds(3),
            announcementTimeout: Duration = .seconds(5), takeoverTimeout: Duration = .seconds(30),
            maximumRetries: Int = 3, maximumInFlight: Int = 3,
            holeWait: Duration? = nil, asksAgainBeforeLosingHeld: Bool = false
        ) {
            self.maximumBuffered = Swift.max(1, maximumBuffered)
            self.requestTimeout = requestTimeout
            self.announcementTimeout = announcementTimeout
            self.takeoverTimeout = takeoverTimeout
            self.maximumRetries = Swift.max(1, maximumRetries)
            self.maximumInFlight = Swift.max(1, maximumInFlight)
            self.holeWait = holeWait.map { Swift.max(.zero, $0) }
            self.asksAgainBeforeLosingHeld = asksAgainBeforeLosingHeld
        }
    }

    /// What happened to the stream: `duplicates`, `replayed`, `deferred` (live messages not
    /// buffered for lack of room, fetched later), `requests`, `retries`, `serverGone`, `lost`
    /// (messages), `cutBatches` (batches the server cut short, asked for again), `holesGivenUp`
    /// (holes and tails not filled within the policy's ``Policy/holeWait``).
    public var counters: Counters { storedCounters }
    @usableFromInline var storedCounters = Counters()

    /// The counts of ``counters`` (each saturates at `Int.max`).
    public struct Counters: Sendable, Equatable {
        /// Messages older than the position, or received twice while held.
        public var duplicates = 0
        /// Messages received from a replay.
        public var replayed = 0
        /// Live messages not held for lack of room (fetched by replay later).
        public var deferred = 0
        /// Requests sent (again ones included).
        public var requests = 0
        /// Requests sent again after a timeout.
        public var retries = 0
        /// Servers taken for gone (requests in a row without an answer).
        public var serverGone = 0
        /// Messages lost for good.
        public var lost = 0
        /// Batches the server cut short, asked for again.
        public var cutBatches = 0
        /// Holes and tails not filled within the policy's ``Policy/holeWait``.
        public var holesGivenUp = 0

        /// No counts yet.
        public init() {}

        /// The counts that are not zero, by name.
        public var named: [String: Int] {
            let all = [
                ("duplicates", duplicates), ("replayed", replayed), ("deferred", deferred),
                ("requests", requests), ("retries", retries), ("serverGone", serverGone), ("lost", lost),
                ("cutBatches", cutBatches), ("holesGivenUp", holesGivenUp),
            ]
            return Dictionary(uniqueKeysWithValues: all.filter { $0.1 > 0 })
        }
    }

    @usableFromInline struct Pending: Sendable {
        @usableFromInline var id: UInt32
        @usableFromInline var from: UInt64
        @usableFromInline var sentAt: Duration

        @usableFromInline init(id: UInt32, from: UInt64, sentAt: Duration) {
            self.id = id
            self.from = from
            self.sentAt = sentAt
        }
    }

    /// Where delivery stands.
    @usableFromInline enum Position: Sendable {
        /// `next` is the next sequence number to deliver.
        case at(UInt64)
        /// `UInt64.max` was delivered: nothing can follow it.
        case exhausted
    }

    @usableFromInline let policy: Policy
    @usableFromInline var position: Position
    /// The messages held after a hole, with when each arrived.
    @usableFromInline var buffer: [UInt64: (message: Message, arrived: Duration)] = [:]
    @usableFromInline var endpoint: String?
    @usableFromInline var announcedLast: UInt64?
    @usableFromInline var suspectedTail: UInt64?
    /// The requests under way, oldest first (at most the policy's `maximumInFlight`).
    @usableFromInline var pending: [Pending] = []
    /// Where what the requests under way ask for ends (exclusive).
    @usableFromInline var requestedEnd: UInt64?
    /// The last sequence number the server said it holds (its last batch end).
    @usableFromInline var serverLast: UInt64?
    /// Requests in a row that got no answer (a server that has gone).
    @usableFromInline var unanswered = 0
    /// When the hole before the buffered messages was first seen (`nil`: no hole).
    @usableFromInline var holeSince: Duration?
    /// When a tail (asked for with nothing buffered after it) began to be waited for, under a
    /// ``Policy/holeWait``.
    @usableFromInline var tailSince: Duration?
    /// The position at which a batch ended short of the buffered messages once already
    /// (``Policy/asksAgainBeforeLosingHeld``).
    @usableFromInline var askedAgainAt: UInt64?
    @usableFromInline var unknownToServer = false
    /// When its publisher said the stream moves to another process, while no endpoint was
    /// known (``moving(now:)``); cleared by an announcement.
    @usableFromInline var movingSince: Duration?
    /// When a server was first taken for gone with no answer from any server since (an
    /// exactly-once stream waits for another announcement up to ``Policy/takeoverTimeout`` from
    /// then, however often a silent server is announced again).
    @usableFromInline var goneSince: Duration?
    /// Whether a message was dropped for lack of room since the last request was sent (a
    /// replayed one among them, maybe: the batch cannot tell what the server skipped).
    @usableFromInline var deferredWhileAsking = false

    /// A stream whose next message to deliver is `next` (`nil`: `UInt64.max` was delivered).
    /// - Parameters:
    ///   - server: Where the stream's replay server is, when the caller knows it without
    ///     announcements (a shell that finds the server itself); `nil`: wait for
    ///     ``announced(endpoint:last:followedNow:now:numbers:into:)``.
    @inlinable
    public init(next: UInt64?, policy: Policy = Policy(), server: String? = nil) {
        self.policy = policy
        position = next.map(Position.at) ?? .exhausted
        endpoint = server
    }

    /// Whether the stream waits for something: a hole before buffered messages, or messages
    /// asked for and not yet delivered.
    @inlinable
    public var isWaiting: Bool {
        if isBehindBuffer { return true }
        guard let end = requestedEnd, let next else { return false }
        return next < end && !pending.isEmpty
    }

    /// Whether a request is under way (a reply is expected).
    @inlinable
    public var isAsking: Bool { !pending.isEmpty }

    /// Whether messages are buffered after a hole.
    @inlinable
    public var hasBuffered: Bool { !buffer.isEmpty }

    /// When ``tick(now:numbers:into:)`` next has something to do: the timeout of the oldest
    /// request under way, the end of a hole's or a tail's wait, or of the wait for an
    /// announcement (`nil`: nothing to time).
    @inlinable
    public var deadline: Duration? {
        var earliest = pending.first.map { $0.sentAt + policy.requestTimeout }
        func consider(_ time: Duration) { earliest = Swift.min(earliest ?? time, time) }
        if let since = holeSince {
            if let wait = policy.holeWait {
                consider(since + wait)
            } else if endpoint == nil {
                consider(announcementDeadline(holeSince: since))
            }
        }
        if let wait = policy.holeWait, let since = tailSince { consider(since + wait) }
        return earliest
    }

    /// The next sequence number to deliver (`nil`: none can follow, `UInt64.max` was delivered).
    @inlinable
    public var next: UInt64? {
        if case .at(let next) = position { next } else { nil }
    }

    /// Whether a request with this number is under way.
    @inlinable
    public func isPending(_ id: UInt32) -> Bool { pending.contains { $0.id == id } }

    /// The common case decided in place, with no action made: when `sequence` is the next to
    /// deliver, nothing is buffered and delivering it asks for nothing, the stream moves past it
    /// and returns `true` (the caller delivers the message); otherwise nothing changes and the
    /// message goes to ``received(sequence:message:live:now:numbers:into:)``.
    @inlinable
    public mutating func takeInOrder(sequence: UInt64, live: Bool) -> Bool {
        guard case .at(let next) = position, sequence == next, buffer.isEmpty else { return false }
        if let last = announcedLast, sequence < last, pending.count < policy.maximumInFlight,
            endpoint != nil
        {
            return false  // still behind what was announced: the next request goes now
        }
        if !live { countReplayed() }
        position = sequence == .max ? .exhausted : .at(sequence + 1)
        holeSince = nil
        return true
    }

    /// One more message received from a replay (``takeInOrder(sequence:live:)``'s count).
    @inlinable mutating func countReplayed() { storedCounters.replayed.addSaturating(1) }

    /// A message numbered `sequence`: received `live` from the bus, or from a replay, at
    /// `arrived` (when it was received, if it waited since; `nil`: `now`).
    @inlinable
    public mutating func received(
        sequence: UInt64, message: Message, live: Bool, arrived: Duration? = nil, now: Duration,
        numbers: inout RequestNumbers, into actions: inout [Action]
    ) {
        if !live { storedCounters.replayed.addSaturating(1) }
        guard case .at(let next) = position, sequence >= next else {
            storedCounters.duplicates.addSaturating(1)
            return
        }
        if sequence == next {
            deliver(sequence, message, into: &actions)
            drain(into: &actions)
        } else if buffer[sequence] != nil {
            storedCounters.duplicates.addSaturating(1)
        } else if buffer.count < policy.maximumBuffered {
            buffer[sequence] = (message, arrived ?? now)
        } else {
            storedCounters.deferred.addSaturating(1)
            if !pending.isEmpty { deferredWhileAsking = true }
        }
        if isBehindBuffer, holeSince == nil { holeSince = policy.holeWait == nil ? now : (arrived ?? now) }
        requestIfBehind(now: now, numbers: &numbers, into: &actions)
        settleTail()
    }

    /// The end of the replay batch `id`: the server sent `count` messages from `first`, holds the
    /// stream through `last`, and would go on at `next` (a ``ReplayBatchEnd``). A batch of a
    /// request no longer under way is ignored.
    ///
    /// A server answers one connection's requests in order, and cuts a batch short, end
    /// included, when the client's queue is full (a slow client): the end of a later batch while
    /// an earlier one is still under way means that one was cut. What it was to send is not
    /// lost: every request under way is dropped and the hole is asked for again at once.
    @inlinable
    public mutating func replayEnded(
        _ end: ReplayBatchEnd, now: Duration, numbers: inout RequestNumbers, into actions: inout [Action]
    ) {
        guard let index = pending.firstIndex(where: { $0.id == end.requestID }) else { return }
        let from = pending[index].from
        let cut = index > 0
        if cut {
            storedCounters.cutBatches.addSaturating(index)
            pending = []
        } else {
            pending.remove(at: 0)
        }
        if pending.isEmpty { requestedEnd = nil }
        unanswered = 0
        goneSince = nil
        // The server's word on what it holds wins over any announcement (a forged heartbeat
        // with a `last` it cannot serve must not have the stream asked for again and again).
        announcedLast = end.last
        serverLast = end.last
        // A batch never goes past what the server holds. What it says of its own range only
        // (delivery stands in it: no earlier batch left a hole before it).
        let endNext = Swift.min(end.next, end.last == .max ? .max : end.last + 1)
        if let next, next >= from, next < end.first, end.first <= endNext {
            skip(to: end.first, into: &actions)
        }
        if let next, next >= from, next < endNext, !deferredWhileAsking {
            // The server went past these without sending them (a damaged journal record, never
            // served): asking again would get the same answer, for ever. They are lost.
            skip(to: endNext, into: &actions)
        }
        if end.isStreamEnd, let next, let lowest = buffer.keys.min(), next < lowest, next > end.last {
            if policy.asksAgainBeforeLosingHeld, askedAgainAt != next {
                // The reply may predate the messages held (a subscription that took effect
                // after the request): asked once more.
                askedAgainAt = next
            } else {
                // The server has nothing more, yet there is a hole before what was received
                // live: those messages are not to be had.
                skip(to: lowest, into: &actions)
            }
        }
        if end.count > 0 || end.isStreamEnd || cut {
            requestIfBehind(now: now, numbers: &numbers, into: &actions)
        }
        settleTail()
    }

    /// The replay request `id` was refused: what it asked for that cannot be had is lost
    /// (`notRetained`: everything before `first`; any other code: the hole).
    @inlinable
    public mutating func replayFailed(
        _ failure: ReplayFailure, now: Duration, numbers: inout RequestNumbers, into actions: inout [Action]
    ) {
        guard isPending(failure.requestID) else { return }
        pending.removeAll { $0.id == failure.requestID }
        if pending.isEmpty { requestedEnd = nil }
        unanswered = 0
        goneSince = nil
        switch failure.code {
        case .notRetained:
            skip(to: failure.first, into: &actions)
            requestIfBehind(now: now, numbers: &numbers, into: &actions)
        case .unknownStream where movingSince != nil:
            // Not served while it moves (the broker forgot its old server, the taker has not
            // announced it yet): the taker's announcement is waited for.
            endpoint = nil
        case .unknownStream, .malformedRequest, .unsupportedVersion, .notAllowed:
            unknownToServer = true
            skipHole(now: now, into: &actions)
        }
        settleTail()
    }

    /// No server can answer the request `id` (its shell knows none for the stream, or the one
    /// it knew has gone): every request under way is dropped and the hole is lost, as for a
    /// server that stopped answering; the next hole is asked for again (a server may be back).
    @inlinable
    public mutating func serverUnavailable(
        requestID id: UInt32, now: Duration, numbers: inout RequestNumbers, into actions: inout [Action]
    ) {
        guard isPending(id) else { return }
        pending = []
        requestedEnd = nil
        unanswered = 0
        storedCounters.serverGone.addSaturating(1)
        if !isBehindBuffer, policy.holeWait != nil {
            // A tail no server can send, live first: left where it is until announced again
            // (nothing past it was delivered, so nothing is given up).
            announcedLast = nil
            suspectedTail = nil
        } else {
            skipHole(now: now, into: &actions)
        }
        settleTail()
    }

    /// The stream's publisher announced (its heartbeat) that it serves the stream at `endpoint`
    /// and has published it through `last`. `followedNow`: the stream was not followed before
    /// this announcement (its first request goes at once).
    @inlinable
    public mutating func announced(
        endpoint: String, last: UInt64, followedNow: Bool = false, now: Duration,
        numbers: inout RequestNumbers, into actions: inout [Action]
    ) {
        // Another server serves the stream now (a pool session's taker, a worker restarted at
        // another endpoint): what was asked of the old one, which may never answer (paused,
        // fenced, dead), is asked of the new one at once, with retries of its own. Counting the
        // old server's silence against the new one lost holes the journal still held.
        let moved = self.endpoint.map { $0 != endpoint } ?? false
        let askAgain = moved && !pending.isEmpty
        if moved {
            if askAgain { storedCounters.retries.addSaturating(1) }
            pending = []
            requestedEnd = nil
            unanswered = 0
        }
        self.endpoint = endpoint
        movingSince = nil
        // Announced as served: a server that did not know the stream before (another process
        // serves it now: a taker, a restarted worker) is asked again at the next hole.
        unknownToServer = false
        announcedLast = Swift.max(announcedLast ?? last, last)
        guard let next else { return }
        if followedNow || !buffer.isEmpty || askAgain {
            requestIfBehind(now: now, numbers: &numbers, into: &actions)
        } else if last >= next {
            // Behind an idle stream: ask when a later heartbeat still says so (the live
            // messages may simply be on their way).
            if let suspected = suspectedTail, suspected >= next {
                suspectedTail = nil
                requestIfBehind(now: now, numbers: &numbers, into: &actions)
            } else {
                suspectedTail = last
            }
        } else {
            suspectedTail = nil
        }
    }

    /// The stream's publisher said it no longer serves the stream, which goes on in another
    /// process (a pool session moved or fenced: ``MovingStream``). When no replay endpoint is
    /// known for it (the stream was seen live, never announced), a hole in it waits for the
    /// taker's announcement up to ``Policy/takeoverTimeout`` from now, instead of being taken
    /// for a hole of a publisher that serves no replay after ``Policy/announcementTimeout``.
    /// A stream with a known endpoint asks it on; if its server stops answering, or says it
    /// does not know the stream, the hole waits for the taker's announcement the same way
    /// instead of being lost. The wait counts from the first word since the last announcement.
    @inlinable
    public mutating func moving(now: Duration) {
        guard movingSince == nil else { return }
        movingSince = now
        unknownToServer = false
    }

    /// When a hole first seen at `since`, in a stream with no known endpoint, is given up: after
    /// the announcement's wait, or the takeover's when the stream was said to be moving.
    @inlinable func announcementDeadline(holeSince since: Duration) -> Duration {
        let unannounced = since + policy.announcementTimeout
        guard let moving = movingSince else { return unannounced }
        return Swift.max(unannounced, moving + policy.takeoverTimeout)
    }

    /// The passing of time: requests without an answer are sent again (or, after
    /// ``Policy/maximumRetries``, the server is taken for gone); a hole with no announced server
    /// after ``Policy/announcementTimeout`` is lost.
    @inlinable
    public mutating func tick(now: Duration, numbers: inout RequestNumbers, into actions: inout [Action]) {
        if let oldest = pending.first, now - oldest.sentAt >= policy.requestTimeout {
            // The requests after it are behind it on the same connection: all again.
            pending = []
            requestedEnd = nil
            unanswered += 1
            if unanswered >= policy.maximumRetries {
                // The server has gone: what it was to send cannot be had. Live messages go on;
                // a later announcement of the stream (a server back) is asked again.
                storedCounters.serverGone.addSaturating(1)
                unanswered = 0
                endpoint = nil
                // A stream said to be moving waits for its taker's announcement instead. So
                // does an exactly-once stream (no hole wait) for a takeover's time from the
                // first silence: a pool worker paused or killed says nothing, and its taker
                // announces the stream from another endpoint seconds later (its coordinator's
                // lease, maybe a coordinator away, the rebuild). Its journal holds the hole.
                if movingSince == nil {
                    if policy.holeWait == nil, now - (goneSince ?? now) < policy.takeoverTimeout {
                        goneSince = goneSince ?? now
                        movingSince = now
                    } else {
                        goneSince = nil
                        skipHole(now: now, into: &actions)
                    }
                }
            } else {
                storedCounters.retries.addSaturating(1)
                requestIfBehind(now: now, numbers: &numbers, into: &actions)
            }
        }
        if endpoint == nil, policy.holeWait == nil, let since = holeSince,
            now >= announcementDeadline(holeSince: since)
        {
            movingSince = nil
            goneSince = nil
            skipHole(now: now, into: &actions)
        }
        guard let wait = policy.holeWait else { return }
        var gaveUp = false
        while isBehindBuffer, let since = holeSince, now - since >= wait {
            // Live first: the hole is given up, the messages after it go on (a hole among them
            // is waited for from the arrival of the message after it).
            pending = []
            requestedEnd = nil
            unanswered = 0
            storedCounters.holesGivenUp.addSaturating(1)
            skipHole(now: now, into: &actions)
            gaveUp = true
        }
        if let since = tailSince, now - since >= wait {
            tailSince = nil
            if !isBehindBuffer {
                // A tail nobody sent in time: left where it is until announced again.
                storedCounters.holesGivenUp.addSaturating(1)
                pending = []
                requestedEnd = nil
                unanswered = 0
                announcedLast = nil
                suspectedTail = nil
            }
        }
        if gaveUp { requestIfBehind(now: now, numbers: &numbers, into: &actions) }
        settleTail()
    }

    /// A tail's wait ends when nothing is asked for any more.
    @inlinable mutating func settleTail() {
        if tailSince != nil, pending.isEmpty { tailSince = nil }
    }

    // MARK: - Decisions

    /// Whether a hole lies before the first buffered message.
    @inlinable var isBehindBuffer: Bool {
        guard let next, let lowest = buffer.keys.min() else { return false }
        return next < lowest
    }

    @inlinable mutating func deliver(_ sequence: UInt64, _ message: Message, into actions: inout [Action]) {
        actions.append(.deliver(sequence: sequence, message: message))
        position = sequence == .max ? .exhausted : .at(sequence + 1)
    }

    @inlinable mutating func drain(into actions: inout [Action]) {
        while let next, let held = buffer.removeValue(forKey: next) {
            deliver(next, held.message, into: &actions)
        }
        if !isBehindBuffer { holeSince = nil }
    }

    /// Gives up on everything before `target` that is not buffered: delivers the buffered
    /// messages below it in order, reports the holes between them lost.
    @inlinable mutating func skip(to target: UInt64, into actions: inout [Action]) {
        for sequence in buffer.keys.filter({ $0 < target }).sorted() {
            let held = buffer.removeValue(forKey: sequence)!
            guard let next, sequence >= next else { continue }
            if sequence > next { lose(next..<sequence, into: &actions) }
            deliver(sequence, held.message, into: &actions)
        }
        if let next, next < target {
            lose(next..<target, into: &actions)
            position = .at(target)
        }
        drain(into: &actions)
    }

    /// Gives up on the hole before the first buffered message (or up to the announced last).
    /// A hole after the messages it delivers is waited for from `now` (a stream gone quiet
    /// sends nothing more that would start its wait).
    @inlinable mutating func skipHole(now: Duration, into actions: inout [Action]) {
        if let lowest = buffer.keys.min() {
            skip(to: lowest, into: &actions)
        } else if let last = announcedLast, let next, last >= next {
            skip(to: last == .max ? .max : last + 1, into: &actions)
        }
        if !isBehindBuffer {
            holeSince = nil
        } else if policy.holeWait != nil, let lowest = buffer.keys.min() {
            // Live first: waited for from the arrival of the message after it.
            holeSince = buffer[lowest]?.arrived ?? now
        } else {
            holeSince = now
        }
    }

    @inlinable mutating func lose(_ range: Range<UInt64>, into actions: inout [Action]) {
        guard !range.isEmpty else { return }
        storedCounters.lost.addSaturating(Int(clamping: range.width))
        actions.append(.lost(range))
    }

    @inlinable mutating func requestIfBehind(
        now: Duration, numbers: inout RequestNumbers, into actions: inout [Action]
    ) {
        while pending.count < policy.maximumInFlight, let next {
            let lowest = buffer.keys.min()
            let behindLive = lowest.map { next < $0 } ?? false
            let behindAnnounced = announcedLast.map { next <= $0 } ?? false
            guard behindLive || behindAnnounced else { return }
            guard let endpoint else { return }  // wait for the announcement
            if unknownToServer {
                skipHole(now: now, into: &actions)
                return
            }
            // The next batch starts where the ones under way end; a hole is asked up to the
            // first message held after it, a quiet stream's tail one batch at a time.
            let from = Swift.max(next, requestedEnd ?? next)
            var limit = UInt64(ReplayFormat.maximumBatch)
            if let lowest, behindLive {
                guard from < lowest else { return }
                limit = Swift.min(limit, lowest - from)
            } else if !pending.isEmpty {
                // More batches at once only up to what the server itself said it holds (a
                // heartbeat's word is taken for one request at a time: a forged one costs one).
                guard let last = serverLast, from <= last else { return }
                limit = Swift.min(limit, last - from == .max ? limit : last - from + 1)
            }
            let id = numbers.take()
            if pending.isEmpty { deferredWhileAsking = false }
            if policy.holeWait != nil, !behindLive, tailSince == nil { tailSince = now }
            pending.append(Pending(id: id, from: from, sentAt: now))
            requestedEnd = from.addingReportingOverflow(limit).overflow ? .max : from + limit
            storedCounters.requests.addSaturating(1)
            actions.append(.request(endpoint: endpoint, id: id, from: from, limit: UInt32(limit)))
        }
    }
}

extension OrderedDelivery: Sendable where Message: Sendable {}
extension OrderedDelivery.Action: Sendable where Message: Sendable {}
