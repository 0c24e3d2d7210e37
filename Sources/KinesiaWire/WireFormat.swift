/// Constants of the Kinesia wire format (see `docs/wire-format.md`).
///
/// Every message is two ZeroMQ frames, `[topic, payload]`. Every payload starts with a
/// ``WireHeader`` of ``headerSize`` bytes; poses follow as a little-endian binary record
/// (``PoseCodec``), events, snapshots and health reports as UTF-8 JSON (``JSONPayloadCodec``).
public enum WireFormat {
    /// The two magic bytes that open every payload: `"KW"` (`0x4B 0x57`).
    public static let magic: (UInt8, UInt8) = (0x4B, 0x57)
    /// The format version this code writes and the only one it reads.
    public static let version: UInt8 = 1
    /// The size of ``WireHeader`` on the wire, in bytes.
    public static let headerSize = 28
    /// The largest pose payload accepted, in bytes (a full pose is 549 bytes).
    public static let maximumPosePayloadSize = 64 * 1024
    /// The largest JSON payload accepted (header included), in bytes: 16 KiB.
    ///
    /// Events and snapshots are under 2 KiB (a snapshot with every joint missing and every setup
    /// issue is about 1 KiB); a health report larger than this goes out summarised
    /// (``HealthReport/summarised(toFit:)``). The bound is small on purpose: every queue of the
    /// bus holds at most its high-water mark times ``maximumFrameSize`` bytes.
    public static let maximumJSONPayloadSize = 16 * 1024

    /// The largest frame of a valid message, in bytes: the largest valid payload of any kind (a
    /// JSON payload at its limit; a pose record is at most ``PoseCodec/maximumEncodedSize``,
    /// 549 bytes) or the longest topic, whichever is larger.
    ///
    /// Every socket that receives from the bus refuses larger frames (`ZMQ_MAXMSGSIZE`): the
    /// peer that sends one is disconnected before the frame is stored. A queue of `n` messages
    /// therefore holds at most `n x maximumFrameSize` bytes: 160 MiB at the default high-water
    /// mark of 10,000 messages.
    public static let maximumFrameSize = Swift.max(
        PoseCodec.maximumEncodedSize, maximumJSONPayloadSize, Topic.maximumLength)
}

/// What a payload carries, byte 3 of the header.
///
/// New kinds may be added without a version change; a decoder that meets a kind it does not
/// know reports ``WireError/unknownKind(_:)`` and the consumer skips the message.
public enum PayloadKind: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// A pose, binary (``PoseCodec``).
    case pose = 1
    /// A session event, JSON.
    case event = 2
    /// A session snapshot, JSON.
    case snapshot = 3
    /// A process health report, JSON (``HealthReport``).
    case health = 4
    /// A session's run record, JSON (`runStarted`, `runEnded`: docs/wire-format.md).
    case session = 5

    /// Whether the body after the header is UTF-8 JSON.
    public var isJSON: Bool { self != .pose }

    /// The largest accepted payload of this kind, header included.
    public var maximumPayloadSize: Int {
        isJSON ? WireFormat.maximumJSONPayloadSize : WireFormat.maximumPosePayloadSize
    }

    /// The kind's name: `"pose"`, `"event"`, `"snapshot"`, `"health"`, `"session"`.
    public var description: String {
        switch self {
        case .pose: "pose"
        case .event: "event"
        case .snapshot: "snapshot"
        case .health: "health"
        case .session: "session"
        }
    }
}
