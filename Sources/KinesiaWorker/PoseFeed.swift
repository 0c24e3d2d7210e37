import KinesiaClient
public import KinesiaWire

/// The order in which one camera's poses are analysed: every pose of the session's pose
/// streams at most once, in sequence order, live or replayed, with no I/O and the time passed in.
///
/// The analysis is deterministic, so a session that analyses the same poses in the same order
/// produces the same events with the same sequence numbers. The feed makes that so across
/// losses and restarts, and keeps the analysis live:
///
/// - **New session** (no segments): the first pose received live starts it; the feed answers
///   ``Output/record(_:)`` (the state directory must keep the segment before anything the
///   pose causes is published), then ``Output/analyse(stream:sequence:pose:opensStream:)``.
/// - **New session from the stream's start** (no segments, `beginsAtStreamStart`: its run began
///   before its camera published): the first live pose is held, and the stream is replayed from
///   its first pose that its server still holds (from 0; a server that no longer holds it
///   answers the first it holds) up to the held pose; the segment is recorded at the first pose
///   analysed, before it. When no server answers, the run begins at the held pose, as a new
///   session's.
/// - **Resumed session** (segments from the state directory): live poses are held (up to
///   `maximumHeld`; beyond that they are fetched again later) while the recorded segments are
///   replayed from their first pose (``Output/request(_:)``), skipping the holes the live run
///   gave up on; when the replay reaches the first held live pose, the held poses follow and
///   the feed is live: nothing is analysed twice and nothing is skipped that the live run
///   analysed.
/// - **Live** (the last segment's stream): delivered in order by an ``OrderedDelivery`` with a
///   live-first policy, the clients' exactly-once delivery machine: a live pose past the next
///   expected one is held and the hole is asked for, for at most ``holeWait`` after the first
///   pose past it arrived. A hole not filled by then, or one that no server can fill (the
///   caller answers ``replayFailed(requestID:stream:first:now:)`` at once when nobody serves
///   the stream), is given up: ``Output/skip(stream:sequences:)`` (kept with the segments, so
///   that a rebuild gives it up too, whatever its server holds then), then
///   ``Output/lost(stream:sequences:)`` and the held poses are analysed.
/// - **Tail not received** (the stream's publisher announced on `health/` a last pose the feed
///   is live before, and a later announcement, at least ``tailGrace`` after, finds it still
///   missing: poses sent while the broker was down, after which the source ended or paused):
///   asked for with nothing held (``announced(stream:last:now:)``); a tail not filled within
///   ``holeWait`` leaves the feed live where it was (nothing analysed past it, so nothing to
///   keep with the segments).
/// - **Duplicate or old pose**: dropped.
/// - **New stream id**: the current segment closes at the last pose analysed and a new one
///   opens (recorded) at the new stream's pose; its first pose is analysed with
///   `opensStream: true`, so the worker applies its sender-restart rule at the same point in a
///   replay as it did live.
/// - **Poses no server has while rebuilding** (not retained, an unknown stream, no server, a
///   server that stopped answering: ``maximumRetries`` requests without an answer): reported as
///   ``Output/lost(stream:sequences:)`` with ``isRebuilding`` still `true` and skipped, so the
///   analysis goes on (the worker knows the rebuild no longer matches what it published).
///
/// Every sequence number computation is total: no value a peer sends traps.
///
/// `Pose` is the payload (``FlatPose`` in the worker); the feed never looks inside it.
public struct PoseFeed<Pose> {
    /// What the caller must do, in order.
    public enum Output {
        /// Keep these segments in the state directory now, before publishing what follows.
        case record([PoseSegment])
        /// Keep, with the segments, that the live analysis gave up on these poses of `stream`
        /// (append it before publishing what follows; ``record(_:)`` later includes it).
        case skip(stream: StreamID, sequences: Range<UInt64>)
        /// Analyse this pose now; `opensStream` when it is the first of a segment after the
        /// first (a sender that started a new stream).
        case analyse(stream: StreamID, sequence: UInt64, pose: Pose, opensStream: Bool)
        /// Ask the replay server of the stream for these poses, as request `id` (the replies
        /// name it: ``replayEnded(_:now:)``, ``replayFailed(requestID:stream:first:now:)``).
        case request(PoseReplayRequest, id: UInt32)
        /// These poses cannot be had: they are skipped.
        case lost(stream: StreamID, sequences: Range<UInt64>)
        /// While rebuilding, no server has `stream` from `from` on (a source that ended, a
        /// server gone): how many poses the last run analysed there is unknown.
        case unavailable(stream: StreamID, from: UInt64)
    }

    private enum Phase: Sendable {
        /// No segment yet: the first live pose opens one.
        case new
        /// Rebuilding: replaying segment `segment` from `next`.
        case catchingUp(segment: Int, next: UInt64)
        /// Live on the last segment's stream, delivered by ``delivery``.
        case live
    }

    fileprivate struct Held {
        var stream: StreamID
        var sequence: UInt64
        var pose: Pose
        /// When it was received.
        var arrived: Duration
    }

    private typealias Delivery = OrderedDelivery<Held>

    /// How long a hole in the live poses is waited for, at most, from the arrival of the first
    /// pose after it.
    public let holeWait: Duration
    /// ``holeWait``'s default: 500 ms. A replay round trip on one box takes about a millisecond,
    /// tens on a loaded one; 500 ms also covers a broker that restarts; a cue half a second late
    /// is still in time for a patient (a rep lasts 0.5 to 30 s).
    public static var defaultHoleWait: Duration { .milliseconds(500) }
    /// Requests in a row without an answer after which a rebuild gives up on the server.
    public let maximumRetries: Int
    /// How long after an announcement of a stream's last pose that pose must have arrived: a
    /// pose crosses a box in well under a millisecond and a loaded one in tens; 250 ms, and
    /// an announcement only comes about once a second, so a tail is asked for 1-2 s after the
    /// publisher sent it.
    public static var tailGrace: Duration { .milliseconds(250) }
    /// How long a live request waits for its answer before it is sent again: a replay round
    /// trip takes a millisecond on one box; a second is more than a loaded machine needs, and
    /// a live hole is given up after ``holeWait`` anyway.
    public static var liveRequestTimeout: Duration { .seconds(1) }

    /// The session's segments, oldest first.
    public private(set) var segments: [PoseSegment]
    /// Live poses dropped as duplicates or older than the position.
    public var duplicates: Int {
        closedDeliveries.duplicates + (delivery?.counters.duplicates ?? 0) + ownDuplicates
    }
    /// Live poses not held for lack of room (fetched through replay later).
    public var deferred: Int { closedDeliveries.deferred + (delivery?.counters.deferred ?? 0) + ownDeferred }
    /// Poses lost for good (given up live, or not to be had while rebuilding).
    public private(set) var lost: UInt64 = 0
    /// Holes in the live poses given up (not filled within ``holeWait``, or no server).
    public private(set) var holesSkipped = 0
    /// Poses received from a replay.
    public var replayed: Int {
        closedDeliveries.replayed + (delivery?.counters.replayed ?? 0) + rebuildReplayed
    }
    /// Requests made (retries included).
    public var requests: Int {
        closedDeliveries.requests + (delivery?.counters.requests ?? 0) + rebuildRequests
    }
    /// Whether the feed is rebuilding a resumed session (from ``start(now:)`` until it first
    /// goes live): poses lost then make the rebuild differ from the run it rebuilds.
    public private(set) var isRebuilding: Bool

    private var phase: Phase
    /// The live stream's delivery (while ``Phase/live``).
    private var delivery: Delivery?
    /// The counts of the deliveries of streams the session left.
    private var closedDeliveries = Delivery.Counters()
    private var numbers = Delivery.RequestNumbers()
    /// Poses held: while rebuilding, every live pose; while live, the poses of a new stream
    /// that came while the current one waits for a hole.
    private var held: [Held] = []
    private let maximumHeld: Int
    /// Whether a new session begins at the first pose its stream's server holds, not at the
    /// first live pose.
    public let beginsAtStreamStart: Bool
    /// While replaying a new session's stream from its start: the first pose to analyse is not
    /// known yet, and nothing is recorded until it is.
    private var findingStreamStart = false
    private var ownDuplicates = 0
    private var ownDeferred = 0
    private var rebuildReplayed = 0
    private var rebuildRequests = 0
    /// The position at which a reply ended short of the held poses once already.
    private var retriedHole: UInt64?
    /// Requests in a row that timed out.
    private var unanswered = 0
    /// Whether the last pose the rebuild analysed was numbered `UInt64.max`: its stream can
    /// number no more.
    private var exhausted = false
    /// The rebuild's request under way, to repeat on a timeout.
    public private(set) var pending: PoseReplayRequest?
    private var pendingID: UInt32 = 0
    /// The oldest announcement of the current stream's last pose that the feed had not
    /// received when it came (``announced(stream:last:now:)``).
    private var announcedTail: (stream: StreamID, last: UInt64, at: Duration)?
    /// Tails asked for (``announced(stream:last:now:)``).
    public private(set) var tailsRequested = 0
    /// The delivery's actions, kept across calls (emptied before each use).
    private var actions: [Delivery.Action] = []

    /// A feed for a new session (`segments` empty) or one to resume (its recorded segments).
    /// - Parameters:
    ///   - segments: What the state directory kept; empty for a new session.
    ///   - beginsAtStreamStart: For a new session: it begins at the first pose of the first
    ///     stream it receives (replayed from its server), not at the first pose received live.
    ///   - maximumHeld: The most live poses held while replaying.
    ///   - holeWait: How long a live hole is waited for, at most.
    ///   - maximumRetries: Unanswered requests in a row after which a rebuild gives up.
    public init(
        segments: [PoseSegment] = [], beginsAtStreamStart: Bool = false, maximumHeld: Int = 50_000,
        holeWait: Duration = defaultHoleWait, maximumRetries: Int = 3
    ) {
        self.segments = segments
        self.beginsAtStreamStart = beginsAtStreamStart && segments.isEmpty
        self.maximumHeld = max(1, maximumHeld)
        self.holeWait = max(.zero, holeWait)
        self.maximumRetries = max(1, maximumRetries)
        isRebuilding = !segments.isEmpty
        phase = segments.isEmpty ? .new : .catchingUp(segment: 0, next: segments[0].first)
    }

    /// Whether the feed is replaying, or waits live for a hole or a tail.
    public var isCatchingUp: Bool {
        switch phase {
        case .new: false
        case .catchingUp: true
        case .live: delivery?.isWaiting ?? false
        }
    }

    /// The next sequence number expected on the current stream (`nil` before the first pose).
    public var position: (stream: StreamID, next: UInt64)? {
        switch phase {
        case .new: nil
        case .catchingUp(let segment, let next): (segments[segment].stream, next)
        case .live: (segments[segments.count - 1].stream, delivery?.next ?? .max)
        }
    }

    /// When ``tick(now:)`` has something to do: the end of the wait for a live hole or tail, or
    /// a live request's timeout.
    public var deadline: Duration? { delivery?.deadline }

    /// Starts the recorded history over at pose `sequence` of `stream` (a new run of the
    /// sessions begins there): the segments before it are dropped, so that a later rebuild
    /// starts there too. The feed's position is kept.
    /// - Returns: The segments to record (empty when `stream` is not one of the feed's).
    public mutating func rebase(stream: StreamID, sequence: UInt64) -> [PoseSegment] {
        guard let index = segments.lastIndex(where: { $0.stream == stream }) else { return [] }
        segments.removeFirst(index)
        segments[0].first = sequence
        segments[0].skipped.removeAll { $0.upperBound <= sequence }
        if case .catchingUp(let segment, let next) = phase {
            phase = .catchingUp(segment: max(0, segment - index), next: next)
        }
        return segments
    }

    /// The first request of a resumed session (nothing for a new one). Call once at start.
    public mutating func start(now: Duration) -> [Output] {
        guard case .catchingUp(let segment, var next) = phase else { return [] }
        if let skipped = segments[segment].skippedRange(holding: next) { next = skipped.upperBound }
        phase = .catchingUp(segment: segment, next: next)
        var out: [Output] = []
        advance(into: &out, askingMore: true, now: now)
        return out
    }

    /// A pose received live from the bus at `now`.
    public mutating func live(stream: StreamID, sequence: UInt64, pose: Pose, now: Duration) -> [Output] {
        var out: [Output] = []
        live(stream: stream, sequence: sequence, pose: pose, now: now, into: &out)
        return out
    }

    /// The common case of a live pose, decided without copying it: when the feed is live on
    /// `stream` and `sequence` is the next pose expected, the feed moves past it and returns
    /// `true`, and the caller analyses it (as ``Output/analyse(stream:sequence:pose:opensStream:)``
    /// with `opensStream` false); otherwise nothing changes and the pose goes to
    /// ``live(stream:sequence:pose:now:into:)``.
    public mutating func takeInOrder(stream: StreamID, sequence: UInt64) -> Bool {
        guard case .live = phase, segments[segments.count - 1].stream == stream else { return false }
        return delivery!.takeInOrder(sequence: sequence, live: true)
    }

    /// A pose received live from the bus at `now`; its outputs appended to `out` (a buffer the
    /// caller keeps and empties: a pose analysed in order allocates nothing).
    public mutating func live(
        stream: StreamID, sequence: UInt64, pose: Pose, now: Duration, into out: inout [Output]
    ) {
        live(Held(stream: stream, sequence: sequence, pose: pose, arrived: now), now: now, into: &out)
        settle(now: now, into: &out)
    }

    private mutating func live(_ pose: Held, now: Duration, into out: inout [Output]) {
        switch phase {
        case .new where beginsAtStreamStart && pose.sequence > 0:
            // The poses before it are replayed first; where the run begins is recorded once the
            // replay finds the first pose the server holds.
            segments = [PoseSegment(stream: pose.stream, first: 0)]
            findingStreamStart = true
            phase = .catchingUp(segment: 0, next: 0)
            hold(pose)
            advance(into: &out, askingMore: true, now: now)
        case .new:
            segments = [PoseSegment(stream: pose.stream, first: pose.sequence)]
            out.append(.record(segments))
            open(after: pose, into: &out)
        case .catchingUp:
            hold(pose)
        case .live:
            let current = segments[segments.count - 1]
            if pose.stream == current.stream {
                actions.removeAll(keepingCapacity: true)
                delivery!.received(
                    sequence: pose.sequence, message: pose, live: true, arrived: pose.arrived, now: now,
                    numbers: &numbers, into: &actions)
                perform(into: &out)
            } else if segments.dropLast().contains(where: { $0.stream == pose.stream }) {
                // A stream the session already closed: an old sender, never analysed again.
                ownDuplicates += 1
            } else if delivery!.hasBuffered || !held.isEmpty {
                // A new stream waits for the hole before it (or the new-stream poses before it).
                hold(pose)
            } else {
                // A new stream: the current segment ends at the last pose analysed (UInt64.max
                // itself when the stream ended there: `next` cannot go past it).
                if let next = delivery!.next {
                    if next > current.first {
                        segments[segments.count - 1].last = next - 1
                        segments[segments.count - 1].skipped.removeAll { $0.lowerBound >= next }
                    } else {
                        segments.removeLast()
                    }
                } else {
                    segments[segments.count - 1].last = .max
                }
                segments.append(PoseSegment(stream: pose.stream, first: pose.sequence))
                out.append(.record(segments))
                open(after: pose, into: &out)
            }
        }
    }

    /// The stream's publisher announced (its `health/` report) that it has published `stream`
    /// through `last`. When the feed is live on `stream` before `last`, waits for nothing, and
    /// an earlier announcement at least ``tailGrace`` ago already was past the position it
    /// still has, the poses from the position on went missing with nothing after them to show
    /// it (no later pose arrived): they are asked for, waited for at most ``holeWait``.
    public mutating func announced(stream: StreamID, last: UInt64, now: Duration) -> [Output] {
        guard case .live = phase, let current = segments.last, current.stream == stream,
            let next = delivery?.next, last >= next, delivery?.isWaiting == false
        else {
            if announcedTail?.stream == stream { announcedTail = nil }
            return []
        }
        guard let earlier = announcedTail, earlier.stream == stream, earlier.last >= next else {
            announcedTail = (stream, last, now)
            return []
        }
        guard now >= earlier.at + Self.tailGrace else { return [] }
        announcedTail = nil
        tailsRequested += 1
        // With no wait at all, a tail is given up at once: the feed stays where it is.
        guard holeWait > .zero else { return [] }
        var out: [Output] = []
        actions.removeAll(keepingCapacity: true)
        delivery!.announced(
            endpoint: Self.server, last: last, followedNow: true, now: now, numbers: &numbers, into: &actions)
        perform(into: &out)
        return out
    }

    /// A pose from a replay reply, received at `now`.
    public mutating func replayed(stream: StreamID, sequence: UInt64, pose: Pose, now: Duration) -> [Output] {
        var out: [Output] = []
        switch phase {
        case .new:
            break
        case .live:
            // A reply nobody waits for (asked before a hole was given up, or never) is dropped.
            guard segments[segments.count - 1].stream == stream, delivery!.isAsking else { break }
            actions.removeAll(keepingCapacity: true)
            delivery!.received(
                sequence: sequence,
                message: Held(stream: stream, sequence: sequence, pose: pose, arrived: now),
                live: false, now: now, numbers: &numbers, into: &actions)
            perform(into: &out)
            settle(now: now, into: &out)
        case .catchingUp(let segment, let next):
            guard segments[segment].stream == stream, sequence == next, !exhausted else { break }
            unanswered = 0
            exhausted = sequence == .max
            foundStreamStart(at: sequence, into: &out)
            out.append(
                .analyse(
                    stream: stream, sequence: sequence, pose: pose,
                    opensStream: segment > 0 && sequence == segments[segment].first))
            rebuildReplayed += 1
            moveTo(segment: segment, next: next, after: true)
            advance(into: &out, askingMore: false, now: now)
        }
        return out
    }

    /// The end of a replay reply (``ReplayBatchEnd``, its `requestID` the one the feed gave).
    public mutating func replayEnded(_ end: ReplayBatchEnd, now: Duration) -> [Output] {
        var out: [Output] = []
        switch phase {
        case .new:
            break
        case .live:
            actions.removeAll(keepingCapacity: true)
            delivery!.replayEnded(end, now: now, numbers: &numbers, into: &actions)
            perform(into: &out)
            settle(now: now, into: &out)
        case .catchingUp(let segment, let next):
            guard segments[segment].stream == end.stream else { break }
            rebuildEnded(segment: segment, next: next, last: end.last, now: now, into: &out)
        }
        return out
    }

    /// The server does not hold what request `id` asked: `first` is the first sequence it holds
    /// of the stream (older ones are gone), or `nil` when it does not know the stream at all (or
    /// no server serves it).
    public mutating func replayFailed(requestID id: UInt32, stream: StreamID, first: UInt64?, now: Duration)
        -> [Output]
    {
        var out: [Output] = []
        switch phase {
        case .new:
            break
        case .live:
            actions.removeAll(keepingCapacity: true)
            if let first {
                let failure = ReplayFailure(
                    requestID: id, code: .notRetained, stream: stream, first: first, last: first, message: "")
                delivery!.replayFailed(failure, now: now, numbers: &numbers, into: &actions)
            } else {
                delivery!.serverUnavailable(requestID: id, now: now, numbers: &numbers, into: &actions)
            }
            perform(into: &out)
            settle(now: now, into: &out)
        case .catchingUp(let segment, let next):
            guard segments[segment].stream == stream else { break }
            rebuildFailed(segment: segment, next: next, first: first, now: now, into: &out)
        }
        return out
    }

    /// The rebuild's request under way got no answer in time: asked again, or, after
    /// ``maximumRetries`` in a row, given up as a server that is gone (what it was to send is
    /// lost). A live request's timeout is the delivery's own (``tick(now:)``).
    public mutating func timedOut(now: Duration) -> [Output] {
        guard let request = pending else { return [] }
        unanswered += 1
        if unanswered >= maximumRetries, case .catchingUp(let segment, let next) = phase,
            segments[segment].stream == request.stream
        {
            pending = nil
            unanswered = 0
            var out: [Output] = []
            failSegment(segment, from: next, now: now, into: &out)
            return out
        }
        rebuildRequests += 1
        return [.request(request, id: pendingID)]
    }

    /// The passing of time: a live hole or tail waited for ``holeWait`` is given up; a live
    /// request without an answer is sent again.
    public mutating func tick(now: Duration) -> [Output] {
        guard case .live = phase, let deadline, now >= deadline else { return [] }
        var out: [Output] = []
        actions.removeAll(keepingCapacity: true)
        delivery!.tick(now: now, numbers: &numbers, into: &actions)
        perform(into: &out)
        settle(now: now, into: &out)
        return out
    }

    // MARK: Live

    /// What the live deliveries are told of their server: the worker's replay client finds a
    /// stream's server itself (from the `health/` announcements), so a request always goes.
    private static var server: String { "the pose stream's replay server" }

    /// The policy of a live stream's delivery: live first.
    private var livePolicy: Delivery.Policy {
        Delivery.Policy(
            maximumBuffered: maximumHeld, requestTimeout: Self.liveRequestTimeout,
            maximumRetries: maximumRetries, maximumInFlight: 1, holeWait: holeWait,
            asksAgainBeforeLosingHeld: true)
    }

    /// Analyses `pose`, the first of a segment, and delivers the segment's stream after it.
    private mutating func open(after pose: Held, into out: inout [Output]) {
        if let delivery { closedDeliveries.add(delivery.counters) }
        delivery = Delivery(
            next: pose.sequence == .max ? nil : pose.sequence + 1, policy: livePolicy, server: Self.server)
        phase = .live
        out.append(
            .analyse(
                stream: pose.stream, sequence: pose.sequence, pose: pose.pose, opensStream: segments.count > 1
            ))
    }

    /// The live delivery's actions as outputs: a hole it gave up is kept with the segments
    /// before the poses after it are analysed.
    private mutating func perform(into out: inout [Output]) {
        let segment = segments.count - 1
        let stream = segments[segment].stream
        for action in actions {
            switch action {
            case .deliver(let sequence, let held):
                out.append(.analyse(stream: stream, sequence: sequence, pose: held.pose, opensStream: false))
            case .request(_, let id, let from, let limit):
                // A batch of the most a server sends is "as far as it holds".
                let through: UInt64? =
                    UInt64(limit) >= UInt64(ReplayFormat.maximumBatch)
                    ? nil : from + UInt64(max(1, limit)) - 1
                out.append(.request(PoseReplayRequest(stream: stream, from: from, through: through), id: id))
            case .lost(let range):
                segments[segment].skipped.append(range)
                holesSkipped += 1
                out.append(.skip(stream: stream, sequences: range))
                declareLost(stream, range, into: &out)
            }
        }
        actions.removeAll(keepingCapacity: true)
    }

    /// After the live delivery moved: a deadline already past (a held pose that arrived more
    /// than ``holeWait`` ago) is acted on now, and the poses of a new stream held behind a hole
    /// go on once it is settled.
    private mutating func settle(now: Duration, into out: inout [Output]) {
        guard case .live = phase else { return }
        if let deadline, deadline <= now {
            actions.removeAll(keepingCapacity: true)
            delivery!.tick(now: now, numbers: &numbers, into: &actions)
            perform(into: &out)
        }
        guard !held.isEmpty, !delivery!.hasBuffered else { return }
        let waiting = held
        held = []
        for (index, pose) in waiting.enumerated() {
            live(pose, now: now, into: &out)
            if delivery!.hasBuffered {
                // A hole again: the rest stay held, in order.
                held.append(contentsOf: waiting[(index + 1)...])
                return
            }
        }
    }

    // MARK: Rebuild

    private mutating func rebuildEnded(
        segment: Int, next: UInt64, last: UInt64?, now: Duration, into out: inout [Output]
    ) {
        pending = nil
        unanswered = 0
        let stream = segments[segment].stream
        if let last, next <= last {
            // More to fetch.
            advance(into: &out, askingMore: true, now: now)
            return
        }
        // The server holds nothing more of this stream.
        if segment < segments.count - 1 {
            leaveSegment(segment, from: next, now: now, into: &out)
            return
        }
        if let firstHeld = firstHeld(of: stream, from: next) {
            // A pose held live was journaled before it was sent, so the hole before it exists:
            // the reply may predate it (a subscription that took effect after the request). Ask
            // once more; a server that still lacks it has lost it.
            if retriedHole != next {
                retriedHole = next
                advance(into: &out, askingMore: true, now: now)
                return
            }
            skipToHeld(stream, from: next, to: firstHeld, now: now, into: &out)
            return
        }
        // Nothing held: the replay reached the end of what exists; go live from here.
        goLive(next: next, now: now, into: &out)
    }

    private mutating func rebuildFailed(
        segment: Int, next: UInt64, first: UInt64?, now: Duration, into out: inout [Output]
    ) {
        pending = nil
        unanswered = 0
        if let first, first > next, first <= (segments[segment].last ?? .max) {
            let stream = segments[segment].stream
            // Before the stream's start is found, poses the server no longer holds are not the
            // run's: it begins at the first one it holds.
            if !findingStreamStart { declareLost(stream, next..<first, into: &out) }
            phase = .catchingUp(segment: segment, next: first)
            advance(into: &out, askingMore: true, now: now)
            return
        }
        failSegment(segment, from: next, now: now, into: &out)
    }

    /// Catching up on `segment` after (or at) `next`, past a skipped range that starts there.
    private mutating func moveTo(segment: Int, next: UInt64, after: Bool) {
        var target = next
        if after { target = next == .max ? .max : next + 1 }
        if let skipped = segments[segment].skippedRange(holding: target) { target = skipped.upperBound }
        phase = .catchingUp(segment: segment, next: target)
    }

    private func firstHeld(of stream: StreamID, from next: UInt64) -> UInt64? {
        held.first(where: { $0.stream == stream && $0.sequence >= next })?.sequence
    }

    private mutating func hold(_ pose: Held) {
        guard held.count < maximumHeld else {
            ownDeferred += 1
            return
        }
        held.append(pose)
    }

    private mutating func ask(segment: Int, from next: UInt64) -> Output {
        let stream = segments[segment].stream
        var through = segments[segment].last
        if through == nil, let firstHeld = firstHeld(of: stream, from: next), firstHeld > next {
            through = firstHeld - 1
        }
        if let skipped = segments[segment].nextSkipped(from: next), skipped.lowerBound > next {
            through = min(through ?? .max, skipped.lowerBound - 1)
        }
        let request = PoseReplayRequest(stream: stream, from: next, through: through, waitsForServer: true)
        pending = request
        pendingID = numbers.take()
        rebuildRequests += 1
        return .request(request, id: pendingID)
    }

    /// Reports `range` (through its upper bound itself when `through`) lost.
    private mutating func declareLost(
        _ stream: StreamID, _ range: Range<UInt64>, through: Bool = false, into out: inout [Output]
    ) {
        var range = range
        if through { range = range.lowerBound..<(range.upperBound == .max ? .max : range.upperBound + 1) }
        guard !range.isEmpty else { return }
        lost.addSaturating(range.width)
        out.append(.lost(stream: stream, sequences: range))
    }

    /// The closed `segment` has nothing more from `next`: the rest of it is lost, and the next
    /// segment is asked for.
    private mutating func leaveSegment(
        _ segment: Int, from next: UInt64, now: Duration, into out: inout [Output]
    ) {
        if let last = segments[segment].last, last >= next {
            declareLost(segments[segment].stream, next..<last, through: true, into: &out)
        }
        phase = .catchingUp(segment: segment + 1, next: segments[segment + 1].first)
        advance(into: &out, askingMore: true, now: now)
    }

    /// Nothing more of `segment` can be had from `next`: the next segment, or the held poses.
    private mutating func failSegment(
        _ segment: Int, from next: UInt64, now: Duration, into out: inout [Output]
    ) {
        let stream = segments[segment].stream
        if segment < segments.count - 1 {
            leaveSegment(segment, from: next, now: now, into: &out)
            return
        }
        if let firstHeld = firstHeld(of: stream, from: next) {
            skipToHeld(stream, from: next, to: firstHeld, now: now, into: &out)
            return
        }
        if !findingStreamStart { out.append(.unavailable(stream: stream, from: next)) }
        goLive(next: next, now: now, into: &out)
    }

    /// The rebuild's last hole `next..<target` cannot be filled: lost, then the held poses from
    /// `target` (a rebuild's losses are not kept: the run it rebuilds did not give them up).
    private mutating func skipToHeld(
        _ stream: StreamID, from next: UInt64, to target: UInt64, now: Duration, into out: inout [Output]
    ) {
        if target > next, !findingStreamStart { declareLost(stream, next..<target, into: &out) }
        goLive(next: max(next, target), now: now, into: &out)
    }

    /// After progress while catching up: the next segment when this one is done, the held poses
    /// when the replay reached them, or (when `askingMore`, at the end of a reply) the next batch.
    private mutating func advance(into out: inout [Output], askingMore: Bool, now: Duration) {
        var askingMore = askingMore
        while case .catchingUp(let segment, let next) = phase {
            if let skipped = segments[segment].skippedRange(holding: next) {
                phase = .catchingUp(segment: segment, next: skipped.upperBound)
                continue
            }
            if segment < segments.count - 1 {
                if let last = segments[segment].last, next > last {
                    // The segment is done: the next one is asked for at once.
                    phase = .catchingUp(segment: segment + 1, next: segments[segment + 1].first)
                    askingMore = true
                    continue
                }
                if askingMore { out.append(ask(segment: segment, from: next)) }
                return
            }
            let stream = segments[segment].stream
            held.removeAll { $0.stream == stream && $0.sequence < next }
            if let first = held.first, first.stream == stream, first.sequence == next {
                goLive(next: next, now: now, into: &out)
                return
            }
            if askingMore { out.append(ask(segment: segment, from: next)) }
            return
        }
    }

    /// While looking for the stream's start: the run begins at pose `sequence`, recorded before
    /// it is analysed.
    private mutating func foundStreamStart(at sequence: UInt64, into out: inout [Output]) {
        guard findingStreamStart else { return }
        findingStreamStart = false
        segments[0].first = sequence
        out.append(.record(segments))
    }

    /// Live from `next` on the last segment's stream: the held poses go through ``live``'s
    /// rules, in the order they arrived (a hole among them is waited for from the arrival of
    /// the pose after it, so no pose waits longer than ``holeWait`` in all).
    private mutating func goLive(next: UInt64, now: Duration, into out: inout [Output]) {
        foundStreamStart(at: next, into: &out)
        pending = nil
        retriedHole = nil
        isRebuilding = false
        delivery = Delivery(next: exhausted ? nil : next, policy: livePolicy, server: Self.server)
        phase = .live
        let waiting = held
        held = []
        for pose in waiting {
            live(pose, now: now, into: &out)
        }
        settle(now: now, into: &out)
    }
}

extension OrderedDelivery.Counters {
    /// Adds `other`'s counts (saturating).
    fileprivate mutating func add(_ other: Self) {
        duplicates.addSaturating(other.duplicates)
        replayed.addSaturating(other.replayed)
        deferred.addSaturating(other.deferred)
        requests.addSaturating(other.requests)
    }
}

extension PoseFeed: Sendable where Pose: Sendable {}
extension PoseFeed.Output: Sendable where Pose: Sendable {}
extension PoseFeed.Held: Sendable where Pose: Sendable {}
