/// Why a replay frame could not be read. Every malformed frame ends in one of these, never in
/// a crash; a server answers a request it cannot read with ``ReplayErrorCode/malformedRequest``.
public enum ReplayFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The frame ends before a field it announces.
    case truncated(needed: Int, available: Int)
    /// The frame does not start with `"KR"`.
    case badMagic
    /// The version byte is not ``ReplayFormat/version``.
    case unsupportedVersion(UInt8)
    /// The frame type is not one this version knows, or not one expected here (a reply sent
    /// as a request).
    case unexpectedType(UInt8)
    /// The topic is not a valid topic.
    case invalidTopic(TopicError)
    /// A request for zero entries.
    case invalidLimit
    /// Bytes after the end of a fixed-size frame or the announced topic.
    case trailingBytes(count: Int)
    /// A reply message with the wrong number of frames.
    case frameCount(Int)
    /// An error reply's code is not one this version knows.
    case unknownErrorCode(UInt8)
    /// An error reply's message is not valid UTF-8 or is too long.
    case invalidText

    /// The stable name shared with the Python client's `kinesia.replay` (`clients/python`).
    public var code: String {
        switch self {
        case .truncated: "truncated"
        case .badMagic: "badMagic"
        case .unsupportedVersion: "unsupportedVersion"
        case .unexpectedType: "unexpectedType"
        case .invalidTopic: "invalidTopic"
        case .invalidLimit: "invalidLimit"
        case .trailingBytes: "trailingBytes"
        case .frameCount: "frameCount"
        case .unknownErrorCode: "unknownErrorCode"
        case .invalidText: "invalidText"
        }
    }

    /// A sentence that says what is wrong.
    public var description: String {
        switch self {
        case .truncated(let needed, let available):
            "truncated replay frame: needs \(needed) bytes, has \(available)"
        case .badMagic: "not a Kinesia replay frame (bad magic)"
        case .unsupportedVersion(let version):
            "unsupported replay version \(version) (this build speaks \(ReplayFormat.version))"
        case .unexpectedType(let type): "unexpected replay frame type 0x\(String(type, radix: 16))"
        case .invalidTopic(let error): "invalid topic: \(error)"
        case .invalidLimit: "a request must ask for at least one entry"
        case .trailingBytes(let count): "\(count) unexpected bytes at the end of the frame"
        case .frameCount(let count): "unexpected replay message of \(count) frames"
        case .unknownErrorCode(let code): "unknown replay error code \(code)"
        case .invalidText: "the error message is not valid UTF-8 of at most 256 bytes"
        }
    }
}
