public import KinesiaWire

/// A run of one pose stream that a session analysed: from sequence number ``first`` of
/// ``stream`` through ``last`` (`nil`: still going).
///
/// A session's pose history is a list of segments, one per pose stream it read (a new stream
/// id on the camera's topic closes the current segment and opens the next). The state directory
/// keeps the list, so that a restarted worker replays exactly the poses the session analysed.
public struct PoseSegment: Hashable, Sendable, CustomStringConvertible {
    /// The ingest's stream id.
    public var stream: StreamID
    /// The first sequence number analysed.
    public var first: UInt64
    /// The last sequence number analysed, once a later stream took over; `nil` while open.
    public var last: UInt64?

    /// Makes a segment.
    public init(stream: StreamID, first: UInt64, last: UInt64? = nil) {
        self.stream = stream
        self.first = first
        self.last = last
    }

    /// `0123456789abcdef 0...41`, or `0123456789abcdef 7...` while open.
    public var description: String { "\(stream) \(first)...\(last.map(String.init) ?? "")" }
}

/// A request for poses of one stream, to send to the replay server that announced the stream.
public struct PoseReplayRequest: Hashable, Sendable {
    /// The stream.
    public var stream: StreamID
    /// The first sequence number wanted.
    public var from: UInt64
    /// The last one wanted, when known (a hole before a live pose, a closed segment); `nil`:
    /// as far as the server holds.
    public var through: UInt64?

    /// Makes a request.
    public init(stream: StreamID, from: UInt64, through: UInt64? = nil) {
        self.stream = stream
        self.from = from
        self.through = through
    }
}

/// The order in which one camera's poses are analysed: every pose of the session's pose
/// streams exactly once, in sequence order, live or replayed, with no I/O.
///
/// The analysis is deterministic, so a session that analyses the same poses in the same order
/// produces the same events with the same sequence numbers. The feed makes that so across
/// losses and restarts:
///
/// - **New session** (no segments): the first pose received live starts it; the feed answers
///   ``Output/record(_:)`` (the state directory must keep the segment before anything the
///   pose causes is published), then ``Output/analyse(stream:sequence:pose:opensStream:)``.
/// - **Resumed session** (segments from the state directory): live poses are held (up to
///   `maximumHeld`; beyond that they are fetched again later) while the recorded segments are
///   replayed from their first pose (``Output/request(_:)``); when the replay reaches the first
///   held live pose, the held poses follow and the feed is live: nothing is analysed twice and
///   nothing is skipped.
/// - **Gap** (a live pose past the next expected one): the pose is held and the hole is asked
///   for; analysis waits until it is filled.
/// - **Duplicate or old pose**: dropped.
/// - **New stream id**: the current segment closes at the last pose analysed and a new one
///   opens (recorded) at the new stream's pose; its first pose is analysed with
///   `opensStream: true`, so the worker applies its sender-restart rule at the same point in a
///   replay as it did live.
/// - **Poses no server has** (not retained, an unknown stream, no server): reported as
///   ``Output/lost(stream:sequences:)`` and skipped, so the analysis goes on.
///
/// `Pose` is the payload (``FlatPose`` in the worker); the feed never looks inside it.
public struct PoseFeed<Pose> {
    /// What the caller must do, in order.
    public enum Output {
        /// Keep these segments in the state directory now, before publishing what follows.
        case record([PoseSegment])
        /// Analyse this pose now; `opensStream` when it is the first of a segment after the
        /// first (a sender that started a new stream).
        case analyse(stream: StreamID, sequence: UInt64, pose: Pose, opensStream: Bool)
        /// Ask the replay server of the stream for these poses.
        case request(PoseReplayRequest)
        /// These poses cannot be had: they are skipped.
        case lost(stream: StreamID, sequences: Range<UInt64>)
    }

    private enum Phase: Sendable {
        /// No segment yet: the first live pose opens one.
        case new
        /// Replaying segment `segment` from `next`.
        case catchingUp(segment: Int, next: UInt64)
        /// Live on the last segment's stream; `next` is the next sequence number expected.
        case live(next: UInt64)
    }

    fileprivate struct Held {
        var stream: StreamID
        var sequence: UInt64
        var pose: Pose
    }

    /// The session's segments, oldest first.
    public private(set) var segments: [PoseSegment]
    /// Live poses dropped as duplicates or older than the position.
    public private(set) var duplicates = 0
    /// Live poses not held for lack of room (fetched through replay later).
    public private(set) var deferred = 0
    /// Poses lost for good.
    public private(set) var lost: UInt64 = 0
    /// Poses analysed from a replay.
    public private(set) var replayed = 0
    /// Requests made (retries included).
    public private(set) var requests = 0

    private var phase: Phase
    private var held: [Held] = []
    private let maximumHeld: Int
    /// The position at which a reply ended short of the held poses once already.
    private var retriedHole: UInt64?
    /// The request under way, to repeat on a timeout.
    public private(set) var pending: PoseReplayRequest?

    /// A feed for a new session (`segments` empty) or one to resume (its recorded segments).
    /// - Parameters:
    ///   - segments: What the state directory kept; empty for a new session.
    ///   - maximumHeld: The most live poses held while replaying.
    public init(segments: [PoseSegment] = [], maximumHeld: Int = 50_000) {
        self.segments = segments
        self.maximumHeld = max(1, maximumHeld)
        phase = segments.isEmpty ? .new : .catchingUp(segment: 0, next: segments[0].first)
    }

    /// Whether the feed is replaying (live poses are being held).
    public var isCatchingUp: Bool {
        if case .catchingUp = phase { true } else { false }
    }

    /// The next sequence number expected on the current stream (`nil` before the first pose).
    public var position: (stream: StreamID, next: UInt64)? {
        switch phase {
        case .new: nil
        case .catchingUp(let segment, let next): (segments[segment].stream, next)
        case .live(let next): (segments[segments.count - 1].stream, next)
        }
    }

    /// The first request of a resumed session (nothing for a new one). Call once at start.
    public mutating func start() -> [Output] {
        guard case .catchingUp(let segment, let next) = phase else { return [] }
        return [ask(segment: segment, from: next)]
    }

    /// A pose received live from the bus.
    public mutating func live(stream: StreamID, sequence: UInt64, pose: Pose) -> [Output] {
        var out: [Output] = []
        switch phase {
        case .new:
            segments = [PoseSegment(stream: stream, first: sequence)]
            out.append(.record(segments))
            out.append(.analyse(stream: stream, sequence: sequence, pose: pose, opensStream: false))
            phase = .live(next: sequence &+ 1)
        case .catchingUp:
            hold(Held(stream: stream, sequence: sequence, pose: pose))
        case .live(let next):
            let current = segments[segments.count - 1]
            if stream == current.stream {
                if sequence < next {
                    duplicates += 1
                } else if sequence == next {
                    out.append(.analyse(stream: stream, sequence: sequence, pose: pose, opensStream: false))
                    phase = .live(next: next &+ 1)
                } else {
                    hold(Held(stream: stream, sequence: sequence, pose: pose))
                    phase = .catchingUp(segment: segments.count - 1, next: next)
                    out.append(ask(segment: segments.count - 1, from: next))
                }
            } else if segments.dropLast().contains(where: { $0.stream == stream }) {
                // A stream the session already closed: an old sender, never analysed again.
                duplicates += 1
            } else {
                // A new stream: the current segment ends at the last pose analysed.
                if next > current.first {
                    segments[segments.count - 1].last = next - 1
                } else {
                    segments.removeLast()
                }
                segments.append(PoseSegment(stream: stream, first: sequence))
                out.append(.record(segments))
                out.append(
                    .analyse(stream: stream, sequence: sequence, pose: pose, opensStream: segments.count > 1))
                phase = .live(next: sequence &+ 1)
            }
        }
        return out
    }

    /// A pose from a replay reply.
    public mutating func replayed(stream: StreamID, sequence: UInt64, pose: Pose) -> [Output] {
        guard case .catchingUp(let segment, let next) = phase, segments[segment].stream == stream,
            sequence == next
        else { return [] }
        var out: [Output] = [
            .analyse(
                stream: stream, sequence: sequence, pose: pose,
                opensStream: segment > 0 && sequence == segments[segment].first)
        ]
        replayed += 1
        phase = .catchingUp(segment: segment, next: next &+ 1)
        advance(into: &out, askingMore: false)
        return out
    }

    /// The end of a replay reply: the server holds `stream` through `last` (`nil`: nothing).
    public mutating func replayEnded(stream: StreamID, last: UInt64?) -> [Output] {
        guard case .catchingUp(let segment, let next) = phase, segments[segment].stream == stream else {
            return []
        }
        pending = nil
        var out: [Output] = []
        if let last, next <= last {
            // More to fetch.
            advance(into: &out, askingMore: true)
            return out
        }
        // The server holds nothing more of this stream.
        if segment < segments.count - 1 {
            let end = (segments[segment].last ?? next) &+ 1
            if end > next { declareLost(stream, next..<end, into: &out) }
            phase = .catchingUp(segment: segment + 1, next: segments[segment + 1].first)
            advance(into: &out, askingMore: true)
            return out
        }
        if let firstHeld = held.first(where: { $0.stream == stream && $0.sequence >= next }) {
            // A pose held live was journaled before it was sent, so the hole before it exists:
            // the reply may predate it (a subscription that took effect after the request). Ask
            // once more; a server that still lacks it has lost it.
            if retriedHole != next {
                retriedHole = next
                advance(into: &out, askingMore: true)
                return out
            }
            declareLost(stream, next..<firstHeld.sequence, into: &out)
            phase = .catchingUp(segment: segment, next: firstHeld.sequence)
            advance(into: &out, askingMore: false)
            return out
        }
        // Nothing held: the replay reached the end of what exists; go live from here.
        goLive(next: next, into: &out)
        return out
    }

    /// The server does not hold what was asked: `first` is the first sequence it holds of the
    /// stream (older ones are gone), or `nil` when it does not know the stream at all (or no
    /// server announced it in time).
    public mutating func replayFailed(stream: StreamID, first: UInt64?) -> [Output] {
        guard case .catchingUp(let segment, let next) = phase, segments[segment].stream == stream else {
            return []
        }
        pending = nil
        var out: [Output] = []
        if let first, first > next {
            declareLost(stream, next..<first, into: &out)
            phase = .catchingUp(segment: segment, next: first)
            advance(into: &out, askingMore: true)
            return out
        }
        // Nothing of the stream can be had: skip to what is held, or to the next segment.
        if segment < segments.count - 1 {
            if let last = segments[segment].last, last >= next {
                declareLost(stream, next..<(last &+ 1), into: &out)
            }
            phase = .catchingUp(segment: segment + 1, next: segments[segment + 1].first)
            advance(into: &out, askingMore: true)
            return out
        }
        if let firstHeld = held.first(where: { $0.stream == stream && $0.sequence >= next }) {
            if firstHeld.sequence > next { declareLost(stream, next..<firstHeld.sequence, into: &out) }
            phase = .catchingUp(segment: segment, next: firstHeld.sequence)
            advance(into: &out, askingMore: false)
            return out
        }
        goLive(next: next, into: &out)
        return out
    }

    /// The request under way got no answer in time: the same request again.
    public mutating func timedOut() -> [Output] {
        guard let pending else { return [] }
        requests += 1
        return [.request(pending)]
    }

    // MARK: Steps

    private mutating func hold(_ pose: Held) {
        guard held.count < maximumHeld else {
            deferred += 1
            return
        }
        held.append(pose)
    }

    private mutating func ask(segment: Int, from next: UInt64) -> Output {
        let stream = segments[segment].stream
        var through = segments[segment].last
        if through == nil, let firstHeld = held.first(where: { $0.stream == stream && $0.sequence >= next }) {
            through = firstHeld.sequence - 1
        }
        let request = PoseReplayRequest(stream: stream, from: next, through: through)
        pending = request
        requests += 1
        return .request(request)
    }

    private mutating func declareLost(_ stream: StreamID, _ range: Range<UInt64>, into out: inout [Output]) {
        guard !range.isEmpty else { return }
        lost &+= UInt64(range.count)
        out.append(.lost(stream: stream, sequences: range))
    }

    /// After progress while catching up: the next segment when this one is done, the held poses
    /// when the replay reached them, or (when `askingMore`, at the end of a reply) the next batch.
    private mutating func advance(into out: inout [Output], askingMore: Bool) {
        var askingMore = askingMore
        while case .catchingUp(let segment, let next) = phase {
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
                goLive(next: next, into: &out)
                return
            }
            if askingMore { out.append(ask(segment: segment, from: next)) }
            return
        }
    }

    /// Live from `next` on the last segment's stream: the held poses go through ``live``'s
    /// rules, in the order they arrived.
    private mutating func goLive(next: UInt64, into out: inout [Output]) {
        pending = nil
        phase = .live(next: next)
        let waiting = held
        held = []
        for (index, pose) in waiting.enumerated() {
            out += live(stream: pose.stream, sequence: pose.sequence, pose: pose.pose)
            if case .catchingUp = phase {
                // A hole among the held poses: the rest stay held, in order.
                for rest in waiting[(index + 1)...] { hold(rest) }
                return
            }
        }
    }
}

extension PoseFeed: Sendable where Pose: Sendable {}
extension PoseFeed.Output: Sendable where Pose: Sendable {}
extension PoseFeed.Held: Sendable where Pose: Sendable {}
