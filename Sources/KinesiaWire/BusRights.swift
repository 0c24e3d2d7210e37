/// The rights table of the bus: which peer may publish which kind of topic. A pure function
/// the broker applies to the first frame of every message it receives from a publisher.
///
/// | peer | may publish |
/// | --- | --- |
/// | ingest key | `pose/`, `health/` |
/// | worker key | `event/`, `snapshot/`, `health/` |
/// | consumer key | `health/` (its own status report, so that `kinesia status` lists it) |
/// | broker key | `health/` |
/// | trusted (same user over IPC, `--insecure` TCP) | everything |
///
/// Every key may subscribe to every topic. A topic of no known kind is refused to every key.
///
/// ```swift
/// BusRights.verdict(for: .role(.consumer), topic: Array("event/cam0/left/".utf8))
/// // .drop(.event): consumers may not publish events
/// ```
public enum BusRights {
    /// The kind of topic a message claims, from its first bytes.
    public enum TopicKind: UInt8, CaseIterable, Hashable, Sendable, CustomStringConvertible {
        /// `pose/...`
        case pose
        /// `event/...`
        case event
        /// `snapshot/...`
        case snapshot
        /// `health/...`
        case health
        /// `session/...`
        case session
        /// Anything else (a topic this version does not know).
        case unknown

        /// `pose`, `event`, `snapshot`, `health`, `unknown`: the counter names of dropped messages.
        public var description: String {
            switch self {
            case .pose: "pose"
            case .event: "event"
            case .snapshot: "snapshot"
            case .health: "health"
            case .session: "session"
            case .unknown: "unknown"
            }
        }

        /// The kind of a topic from its first frame (byte prefix, no allocation).
        @inlinable
        public init(topic: UnsafeRawBufferPointer) {
            func starts(_ prefix: StaticString) -> Bool {
                let count = prefix.utf8CodeUnitCount
                guard topic.count >= count else { return false }
                let bytes = UnsafeRawBufferPointer(start: prefix.utf8Start, count: count)
                return memcmpEqual(topic.baseAddress!, bytes.baseAddress!, count)
            }
            guard let first = topic.first else {
                self = .unknown
                return
            }
            switch first {
            case UInt8(ascii: "p") where starts("pose/"): self = .pose
            case UInt8(ascii: "e") where starts("event/"): self = .event
            case UInt8(ascii: "s") where starts("snapshot/"): self = .snapshot
            case UInt8(ascii: "s") where starts("session/"): self = .session
            case UInt8(ascii: "h") where starts("health/"): self = .health
            default: self = .unknown
            }
        }
    }

    /// What the broker does with one message.
    public enum Verdict: Hashable, Sendable {
        /// Forward it to the subscribers.
        case forward
        /// Drop it: its sender may not publish a topic of this kind (counted under the kind).
        case drop(TopicKind)
    }

    /// Whether `peer` may publish a topic of `kind`.
    @inlinable
    public static func mayPublish(_ peer: BusPeer, _ kind: TopicKind) -> Bool {
        switch peer {
        case .trusted: true
        case .role(.ingest): kind == .pose || kind == .health
        case .role(.worker): kind == .event || kind == .snapshot || kind == .session || kind == .health
        case .role(.broker): kind == .health
        case .role(.consumer), .role(.control): kind == .health
        }
    }

    /// Whether `peer` may replay (read back through the broker's replay port) a topic of
    /// `kind`: what its role reads to do its work. Consumers and control keys replay events,
    /// snapshots and run records; a worker replays poses (a gap, a rebuild) and the event,
    /// snapshot and run streams of the sessions it takes over; an ingest and the broker replay
    /// nothing. Trusted peers replay everything. Narrower than live subscription, which every key
    /// may make to every topic.
    @inlinable
    public static func mayReplay(_ peer: BusPeer, _ kind: TopicKind) -> Bool {
        switch peer {
        case .trusted: kind != .unknown
        case .role(.worker): kind == .pose || kind == .event || kind == .snapshot || kind == .session
        case .role(.consumer), .role(.control): kind == .event || kind == .snapshot || kind == .session
        case .role(.ingest), .role(.broker): false
        }
    }

    /// Whether `peer` may serve replay of a topic of `kind` through the broker: a topic it may
    /// publish, other than `health/` (never journaled).
    @inlinable
    public static func mayServe(_ peer: BusPeer, _ kind: TopicKind) -> Bool {
        kind != .health && kind != .unknown && mayPublish(peer, kind)
    }

    /// The verdict on a message of `peer` whose first frame is `topic`.
    @inlinable
    public static func verdict(for peer: BusPeer, topic: UnsafeRawBufferPointer) -> Verdict {
        let kind = TopicKind(topic: topic)
        return mayPublish(peer, kind) ? .forward : .drop(kind)
    }

    /// The verdict on a message of `peer` whose first frame is `topic`.
    public static func verdict(for peer: BusPeer, topic: [UInt8]) -> Verdict {
        topic.withUnsafeBytes { verdict(for: peer, topic: $0) }
    }
}

/// Whether `count` bytes at `a` and `b` are equal (a loop the optimiser turns into a compare;
/// no libc import in this module).
@inlinable
internal func memcmpEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    for index in 0..<count
    where a.load(fromByteOffset: index, as: UInt8.self) != b.load(fromByteOffset: index, as: UInt8.self) {
        return false
    }
    return true
}
