public import KinesiaMotion

/// Why a payload could not be encoded or decoded. Decoding never trusts its input: every
/// malformed payload ends in one of these cases, never in a crash.
public enum WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A number of a pose that must be finite.
    public enum NumberField: Hashable, Sendable, CustomStringConvertible {
        /// The pose's timestamp.
        case timestamp
        /// The image width.
        case imageWidth
        /// The image height.
        case imageHeight
        /// A joint's x coordinate.
        case x(Joint)
        /// A joint's y coordinate.
        case y(Joint)
        /// A joint's confidence.
        case confidence(Joint)
        /// A health report's uptime.
        case uptime

        /// The field's name: `"timestamp"`, `"leftElbow.x"`, `"confidence.leftElbow"`...
        public var description: String {
            switch self {
            case .timestamp: "timestamp"
            case .imageWidth: "imageSize.width"
            case .imageHeight: "imageSize.height"
            case .x(let joint): "\(joint.rawValue).x"
            case .y(let joint): "\(joint.rawValue).y"
            case .confidence(let joint): "confidence.\(joint.rawValue)"
            case .uptime: "uptime"
            }
        }
    }

    /// The payload ends before a field it announces: `needed` bytes, `available` present.
    case truncated(needed: Int, available: Int)
    /// The payload does not start with the magic bytes `"KW"`: not a Kinesia message.
    case badMagic
    /// The payload's format version is not ``WireFormat/version``.
    case unsupportedVersion(UInt8)
    /// The header's payload kind is not one this version knows.
    case unknownKind(UInt8)
    /// The payload (or the header given to an encoder) is of a kind this codec does not handle:
    /// an event given to ``PoseCodec``, a pose given to ``JSONPayloadCodec``.
    case unexpectedKind(PayloadKind)
    /// The topic's kind and the payload's kind disagree (an event payload on a `pose/` topic).
    case topicMismatch(topic: Topic.Kind, payload: PayloadKind)
    /// The payload is larger than its kind allows.
    case oversized(size: Int, limit: Int)
    /// Bytes follow the end of the pose record.
    case trailingBytes(count: Int)
    /// Reserved flag bits are set (a later format would have to bump the version to use them).
    case unsupportedFlags(UInt8)
    /// A number is NaN or infinite.
    case nonFinite(NumberField)
    /// The image size is negative.
    case negativeImageSize
    /// A joint index is not a ``Joint/index`` (0...18).
    case unknownJoint(index: UInt8)
    /// A joint appears twice in the same list.
    case duplicateJoint(Joint)
    /// A list announces more joints than exist.
    case tooManyJoints(count: Int)
    /// The JSON body is not valid UTF-8.
    case invalidUTF8
    /// The JSON body is empty.
    case emptyJSON
    /// The JSON body does not decode to the expected type (``HealthReport``), with the
    /// decoder's explanation.
    case invalidJSON(String)
    /// The topic frame is not a valid topic.
    case invalidTopic(TopicError)

    /// The case's stable name, shared with the Python client's `kinesia.wire` and documented in
    /// `docs/wire-format.md`: `"truncated"`, `"badMagic"`, `"nonFinite"`...
    public var code: String {
        switch self {
        case .truncated: "truncated"
        case .badMagic: "badMagic"
        case .unsupportedVersion: "unsupportedVersion"
        case .unknownKind: "unknownKind"
        case .unexpectedKind: "unexpectedKind"
        case .topicMismatch: "topicMismatch"
        case .oversized: "oversized"
        case .trailingBytes: "trailingBytes"
        case .unsupportedFlags: "unsupportedFlags"
        case .nonFinite: "nonFinite"
        case .negativeImageSize: "negativeImageSize"
        case .unknownJoint: "unknownJoint"
        case .duplicateJoint: "duplicateJoint"
        case .tooManyJoints: "tooManyJoints"
        case .invalidUTF8: "invalidUTF8"
        case .emptyJSON: "emptyJSON"
        case .invalidJSON: "invalidJSON"
        case .invalidTopic: "invalidTopic"
        }
    }

    /// A sentence that says what is wrong.
    public var description: String {
        switch self {
        case .truncated(let needed, let available):
            "truncated payload: needs \(needed) bytes, has \(available)"
        case .badMagic: "not a Kinesia payload (bad magic)"
        case .unsupportedVersion(let version):
            "unsupported wire format version \(version) (this build reads \(WireFormat.version))"
        case .unknownKind(let kind): "unknown payload kind \(kind)"
        case .unexpectedKind(let kind): "this codec does not handle \(kind) payloads"
        case .topicMismatch(let topic, let payload):
            "\(EnglishArticle.prefixed("\(payload)")) payload on \(EnglishArticle.prefixed(topic.rawValue)) topic"
        case .oversized(let size, let limit): "payload of \(size) bytes exceeds the limit of \(limit)"
        case .trailingBytes(let count): "\(count) unexpected bytes after the pose record"
        case .unsupportedFlags(let flags): "unsupported flag bits 0x\(String(flags, radix: 16))"
        case .nonFinite(let field): "\(field) is not a finite number"
        case .negativeImageSize: "the image size is negative"
        case .unknownJoint(let index): "unknown joint index \(index)"
        case .duplicateJoint(let joint): "joint \(joint.rawValue) appears twice"
        case .tooManyJoints(let count): "\(count) joints announced (at most \(Joint.allCases.count))"
        case .invalidUTF8: "the JSON body is not valid UTF-8"
        case .emptyJSON: "the JSON body is empty"
        case .invalidJSON(let reason): "the JSON body is invalid: \(reason)"
        case .invalidTopic(let error): "invalid topic: \(error)"
        }
    }
}
