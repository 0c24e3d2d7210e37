public import KinesiaAnalytics
public import KinesiaControl
public import KinesiaMotion
public import KinesiaWire

/// One value of ``BusMessages``: a typed message of the bus, or what the receiver noticed
/// about the stream of messages.
///
/// Lost messages, sender restarts and payloads that do not decode are values like the others,
/// never errors: a consumer sees them in order, between the messages they concern, and goes on.
///
/// ```swift
/// switch message {
/// case .event(let e): print(e.session, e.sequence, e.event.name)
/// case .snapshot(let s): print(s.session, s.snapshot.repCount)
/// case .analytics(let a): print(a.session, a.record.name)
/// case .health(let h): print(h.report.process, h.report.counters)
/// case .pose(let p): print(p.camera, p.pose.timestamp)
/// case .gap(let gap): print(gap)
/// case .malformed(let bad): print(bad)
/// }
/// ```
public enum BusMessage: Sendable, Equatable {
    /// What a session found (`event/<camera>/<session>/`).
    case event(BusEvent)
    /// A session's state (`snapshot/<camera>/<session>/`).
    case snapshot(BusSnapshot)
    /// A record of an analytics session (`event/<camera>/<session>/`, a JSON `"type"` of
    /// ``AnalyticsRecord/names``): a rep's tempo, a pair's symmetry, a set's figures.
    case analytics(BusAnalytics)
    /// A process's counters (`health/<process>/`).
    case health(BusHealth)
    /// A session's run began or ended (`session/<camera>/<session>/`).
    case run(BusRun)
    /// A camera's pose (`pose/<camera>/`), when a subscribed prefix covers poses.
    case pose(BusPose)
    /// Messages that did not arrive, or a sender that started over: comes just before the next
    /// message of the topic (or, for ``BusGap/overflow(dropped:)``, where the hole is).
    case gap(BusGap)
    /// A message that could not be decoded (counted, never fatal).
    case malformed(MalformedMessage)
}

/// A message of the bus with its topic and its sender's header: where it came from and its
/// place in its sender's stream.
public protocol BusTopicMessage {
    /// The topic it came on.
    var topic: Topic { get }
    /// The sender's header: its stream id, the sequence number on ``topic``, the send time.
    var header: WireHeader { get }
}

extension BusTopicMessage {
    /// The camera of the topic (`pose/<camera>/`, `event/<camera>/<session>/`...), or `""` for
    /// a topic that names none (`health/<process>/`).
    public var camera: String { topic.camera ?? "" }
    /// The session of the topic (`event/<camera>/<session>/`), or `""` for one that names none.
    public var session: String { topic.session ?? "" }
    /// The sender's sequence number on this topic (0, 1, 2... for each stream).
    public var sequence: UInt64 { header.sequence }
    /// The sender's stream id (new at every start of the sender).
    public var streamID: StreamID { header.streamID }
}

/// An event of a motion session, as a worker published it: the ``MotionEvent``, the pose
/// timestamp at which it happened, and where it came from.
public struct BusEvent: BusTopicMessage, Hashable, Sendable {
    /// The event.
    public var event: MotionEvent
    /// The timestamp of the pose at which it happened (`"t"` in the JSON), in the pose source's
    /// time base.
    public var t: Double
    /// The topic: `event/<camera>/<session>/`.
    public var topic: Topic
    /// The sender's header: its stream id, the sequence number on ``topic``, the send time.
    public var header: WireHeader

    /// Makes an event message.
    public init(event: MotionEvent, t: Double, topic: Topic, header: WireHeader) {
        self.event = event
        self.t = t
        self.topic = topic
        self.header = header
    }

}

/// A record of an analytics session, as a worker published it (``AnalyticsJSON``), with the pose
/// timestamp at which it was made and where it came from.
public struct BusAnalytics: BusTopicMessage, Hashable, Sendable {
    /// The record.
    public var record: AnalyticsRecord
    /// The timestamp of the pose at which it was made.
    public var t: Double
    /// The topic: `event/<camera>/<session>/`.
    public var topic: Topic
    /// The sender's header.
    public var header: WireHeader

    /// Makes an analytics message.
    public init(record: AnalyticsRecord, t: Double, topic: Topic, header: WireHeader) {
        self.record = record
        self.t = t
        self.topic = topic
        self.header = header
    }
}

/// A session's run record (`runStarted`, `runEnded`), as a worker published it, with where it
/// came from.
public struct BusRun: BusTopicMessage, Hashable, Sendable {
    /// The record.
    public var record: RunRecord
    /// The topic: `session/<camera>/<session>/`.
    public var topic: Topic
    /// The sender's header.
    public var header: WireHeader

    /// Makes a run message.
    public init(record: RunRecord, topic: Topic, header: WireHeader) {
        self.record = record
        self.topic = topic
        self.header = header
    }
}

/// A snapshot of a motion session, as a worker published it, with the pose timestamp it
/// follows and where it came from.
public struct BusSnapshot: BusTopicMessage, Hashable, Sendable {
    /// The session's state after the pose at ``t``.
    public var snapshot: MotionSnapshot
    /// The timestamp of the pose after which the snapshot was taken.
    public var t: Double
    /// The topic: `snapshot/<camera>/<session>/`.
    public var topic: Topic
    /// The sender's header.
    public var header: WireHeader

    /// Makes a snapshot message.
    public init(snapshot: MotionSnapshot, t: Double, topic: Topic, header: WireHeader) {
        self.snapshot = snapshot
        self.t = t
        self.topic = topic
        self.header = header
    }

}

/// A process's health report and where it came from.
public struct BusHealth: BusTopicMessage, Hashable, Sendable {
    /// The report: the process, its role, pid, uptime and counters.
    public var report: HealthReport
    /// The topic: `health/<process>/`.
    public var topic: Topic
    /// The sender's header.
    public var header: WireHeader

    /// Makes a health message.
    public init(report: HealthReport, topic: Topic, header: WireHeader) {
        self.report = report
        self.topic = topic
        self.header = header
    }

    /// The process, as in the topic.
    public var process: String { topic.process ?? report.process }
}

/// A pose of a camera and where it came from.
public struct BusPose: BusTopicMessage, Equatable, Sendable {
    /// The pose.
    public var pose: Pose
    /// The topic: `pose/<camera>/`.
    public var topic: Topic
    /// The sender's header.
    public var header: WireHeader

    /// Makes a pose message.
    public init(pose: Pose, topic: Topic, header: WireHeader) {
        self.pose = pose
        self.topic = topic
        self.header = header
    }

}

/// What the receiver noticed between two messages: messages lost on the way, a sender that
/// started over, or messages dropped because the consumer was slower than the bus.
public enum BusGap: Hashable, Sendable, CustomStringConvertible {
    /// `count` messages of `topic` never arrived: the sequence numbers `before - count ..< before`
    /// (a publisher or the broker dropped them at a high-water mark). The message numbered
    /// `before` follows.
    case missed(topic: Topic, count: UInt64, before: UInt64)
    /// The sender of `topic` started over with a new stream id (its numbering starts again, which
    /// is not a loss). Its first message received follows.
    case senderRestarted(topic: Topic, stream: StreamID)
    /// `dropped` messages (of any topic) were received but not handed on, because the buffer of
    /// ``BusMessages`` was full: the consumer was slower than the bus. The messages around the
    /// hole are in order; what was dropped is lost.
    case overflow(dropped: Int)

    /// A sentence: `"event/cam0/left/: 3 messages missing before #12"`.
    public var description: String {
        switch self {
        case .missed(let topic, let count, let before):
            "\(topic): \(count) message\(count == 1 ? "" : "s") missing before #\(before)"
        case .senderRestarted(let topic, let stream): "\(topic): the sender restarted (stream \(stream))"
        case .overflow(let dropped):
            "\(dropped) message\(dropped == 1 ? "" : "s") dropped: the consumer was slower than the bus"
        }
    }
}

/// A message that could not be decoded: its topic as text, why, and its header when that much
/// decoded.
public struct MalformedMessage: Hashable, Sendable, CustomStringConvertible {
    /// Why a message was not decoded.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// The frames are not a wire message (frame count, header, topic, pose record, health
        /// JSON...).
        case wire(BusDecodeFailure)
        /// An event or snapshot whose JSON ``MotionJSON`` does not read (invalid JSON, an unknown
        /// type, a missing key, an event on a snapshot topic...).
        case json(MotionJSONError)
        /// A run record (`session/<camera>/<session>/`) that ``RunRecord`` does not read.
        case run(String)

        /// A stable name for counters: the ``BusDecodeFailure/code``, or `json.<kind>`
        /// (`json.invalidRecord`...).
        public var code: String {
            switch self {
            case .wire(let failure): failure.code
            case .json(let error): "json.\(error.kind.rawValue)"
            case .run: "run.malformed"
            }
        }

        /// A sentence for people.
        public var description: String {
            switch self {
            case .wire(let failure): failure.description
            case .json(let error): error.description
            case .run(let message): message
            }
        }
    }

    /// The first frame as text (lossy UTF-8, at most ``Topic/maximumLength`` bytes).
    public var topic: String
    /// Why it was not decoded.
    public var reason: Reason
    /// The header, when the wire message decoded and only its JSON did not.
    public var header: WireHeader?

    /// Makes a value.
    public init(topic: String, reason: Reason, header: WireHeader? = nil) {
        self.topic = topic
        self.reason = reason
        self.header = header
    }

    /// `"event/cam0/left/: <reason>"`.
    public var description: String { "\(topic): \(reason)" }
}
