/// The replay protocol's constants (see `docs/wire-format.md`, section "Replay").
///
/// A consumer that missed messages asks the process that published them for those messages
/// again: a DEALER sends one ``ReplayRequest`` frame to the publisher's ROUTER endpoint, which
/// answers with at most ``ReplayRequest/limit`` ``ReplayReply/entry(_:)`` messages, each
/// carrying the original `[topic, payload]` frames byte for byte, and then one
/// ``ReplayReply/end(_:)`` (or a single ``ReplayReply/error(_:)``). Every frame of the protocol
/// starts with the magic `"KR"`, the version and a frame type.
public enum ReplayFormat {
    /// `"KR"` (Kinesia Replay): the first two bytes of every replay frame.
    public static let magic: (UInt8, UInt8) = (0x4B, 0x52)
    /// The replay protocol's version, byte 2 of every replay frame.
    public static let version: UInt8 = 1
    /// The most entries one request may ask for; a larger limit is served as this many.
    public static let maximumBatch: UInt32 = 256
    /// The longest error message text, in bytes.
    public static let maximumMessageLength = 256

    /// The frame types (byte 3).
    public enum FrameType: UInt8, Sendable, Hashable, CaseIterable {
        /// A request: "topic T, stream S, from sequence N, at most K".
        case request = 0x01
        /// One replayed message: this header frame, then the original frames.
        case entry = 0x81
        /// The end of a batch; more is retained after it.
        case batchEnd = 0x82
        /// The end of a batch that reached the stream's last sequence number.
        case streamEnd = 0x83
        /// A refused request.
        case error = 0x8F
    }

    /// Size of a request frame before the topic.
    static let requestFixedSize = 29
    /// Size of an entry's header frame.
    static let entryHeaderSize = 24
    /// Size of an end frame.
    static let endSize = 44
    /// Size of an error frame before its message text.
    static let errorFixedSize = 33
}

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

/// "Send me the messages of topic T, stream S, from sequence N, at most K": the one frame a
/// replay client sends.
///
/// | Offset | Size | Field |
/// |-------:|-----:|-------|
/// | 0 | 2 | magic `4b 52` |
/// | 2 | 1 | version `01` |
/// | 3 | 1 | type `01` |
/// | 4 | 4 | request id (UInt32, echoed in every reply) |
/// | 8 | 8 | stream id (UInt64; 0: the stream the server holds now for the topic) |
/// | 16 | 8 | from sequence (UInt64) |
/// | 24 | 4 | limit (UInt32, at least 1; the server serves at most ``ReplayFormat/maximumBatch``) |
/// | 28 | 1 | topic length `n` |
/// | 29 | n | topic |
public struct ReplayRequest: Hashable, Sendable {
    /// Chosen by the client; every reply to this request carries it.
    public var requestID: UInt32
    /// The topic of the stream.
    public var topic: Topic
    /// The stream; `nil` (0 on the wire) asks for the stream the server holds now.
    public var stream: StreamID?
    /// The first sequence number wanted.
    public var from: UInt64
    /// The most entries wanted (at least 1).
    public var limit: UInt32

    /// Makes a request.
    public init(requestID: UInt32, topic: Topic, stream: StreamID?, from: UInt64, limit: UInt32) {
        self.requestID = requestID
        self.topic = topic
        self.stream = stream
        self.from = from
        self.limit = limit
    }

    /// The request's frame.
    public func encoded() -> [UInt8] {
        let topicBytes = topic.bytes
        var out = ReplayFrameWriter(type: .request)
        out.append(requestID)
        out.append(stream?.rawValue ?? 0)
        out.append(from)
        out.append(limit)
        out.bytes.append(UInt8(topicBytes.count))
        out.bytes += topicBytes
        return out.bytes
    }

    /// Reads a request frame.
    /// - Throws: ``ReplayFrameError``: truncated, foreign, of another version or type, a bad
    ///   topic, a zero limit, trailing bytes.
    public static func decode(_ frame: [UInt8]) throws(ReplayFrameError) -> ReplayRequest {
        var reader = try ReplayFrameReader(frame, expecting: [.request])
        let requestID = try reader.uint32()
        let stream = try reader.uint64()
        let from = try reader.uint64()
        let limit = try reader.uint32()
        let length = Int(try reader.uint8())
        let topicBytes = try reader.bytes(length)
        try reader.finish()
        let topic: Topic
        do {
            topic = try Topic(parsing: topicBytes)
        } catch {
            throw .invalidTopic(error)
        }
        guard limit > 0 else { throw .invalidLimit }
        return ReplayRequest(
            requestID: requestID, topic: topic, stream: stream == 0 ? nil : StreamID(stream), from: from,
            limit: limit)
    }

    /// The request id of a frame that starts like a request, even when the rest is malformed
    /// (so that the error reply can carry it); 0 otherwise.
    public static func requestID(ofMalformed frame: [UInt8]) -> UInt32 {
        guard frame.count >= 8, frame[0] == ReplayFormat.magic.0, frame[1] == ReplayFormat.magic.1 else {
            return 0
        }
        return frame[4..<8].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// One replayed message: the original frames, byte for byte, and where they sit in their stream.
public struct ReplayEntryReply: Hashable, Sendable {
    /// The request this answers.
    public var requestID: UInt32
    /// The stream the message belongs to.
    public var stream: StreamID
    /// Its sequence number.
    public var sequence: UInt64
    /// The frames as published (`[topic, payload]`).
    public var frames: [[UInt8]]

    /// Makes an entry.
    public init(requestID: UInt32, stream: StreamID, sequence: UInt64, frames: [[UInt8]]) {
        self.requestID = requestID
        self.stream = stream
        self.sequence = sequence
        self.frames = frames
    }
}

/// The end of a batch: where the stream stands, and where the next request should start.
public struct ReplayBatchEnd: Hashable, Sendable {
    /// The request this answers.
    public var requestID: UInt32
    /// The stream served.
    public var stream: StreamID
    /// The first sequence number the server still holds.
    public var first: UInt64
    /// The stream's last sequence number (published so far).
    public var last: UInt64
    /// The sequence number after the last entry sent: the next request's `from`.
    public var next: UInt64
    /// The entries sent in this batch.
    public var count: UInt32

    /// Makes an end.
    public init(requestID: UInt32, stream: StreamID, first: UInt64, last: UInt64, next: UInt64, count: UInt32)
    {
        self.requestID = requestID
        self.stream = stream
        self.first = first
        self.last = last
        self.next = next
        self.count = count
    }

    /// Whether the batch reached the end of the stream (nothing after ``next`` is published yet).
    public var isStreamEnd: Bool { next > last }
}

/// What a server says when it cannot serve a request.
public enum ReplayErrorCode: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The request frame could not be read (foreign, truncated, bad topic, zero limit...).
    case malformedRequest = 1
    /// The request's version is not the server's.
    case unsupportedVersion = 2
    /// The server holds no such stream for the topic.
    case unknownStream = 3
    /// The sequences asked for are no longer retained: the first available is in ``ReplayFailure/first``.
    case notRetained = 4

    /// The code's name: `malformedRequest`, `unsupportedVersion`, `unknownStream`, `notRetained`.
    public var description: String {
        switch self {
        case .malformedRequest: "malformedRequest"
        case .unsupportedVersion: "unsupportedVersion"
        case .unknownStream: "unknownStream"
        case .notRetained: "notRetained"
        }
    }
}

/// A refused request.
public struct ReplayFailure: Hashable, Sendable {
    /// The request this answers (0 when it could not be read).
    public var requestID: UInt32
    /// Why.
    public var code: ReplayErrorCode
    /// The stream concerned (0 when none).
    public var stream: StreamID
    /// For ``ReplayErrorCode/notRetained``: the first sequence still held; else 0.
    public var first: UInt64
    /// For ``ReplayErrorCode/notRetained``: the stream's last sequence; else 0.
    public var last: UInt64
    /// A sentence for people (at most 256 bytes of UTF-8).
    public var message: String

    /// Makes a failure; the message is cut to 256 bytes.
    public init(
        requestID: UInt32, code: ReplayErrorCode, stream: StreamID, first: UInt64, last: UInt64,
        message: String
    ) {
        self.requestID = requestID
        self.code = code
        self.stream = stream
        self.first = first
        self.last = last
        var text = message
        while text.utf8.count > ReplayFormat.maximumMessageLength { text.removeLast() }
        self.message = text
    }
}

/// One message a replay server sends back (the ROUTER adds the client's identity in front).
///
/// | Type | Frames |
/// |------|--------|
/// | `81` entry | `[KR 01 81, request id u32, stream id u64, sequence u64]` (24 bytes), then the original frames |
/// | `82` batch end / `83` stream end | `[KR 01 8x, request id u32, stream u64, first u64, last u64, next u64, count u32]` (44 bytes) |
/// | `8f` error | `[KR 01 8f, request id u32, code u8, stream u64, first u64, last u64, message]` (33 bytes + text) |
public enum ReplayReply: Hashable, Sendable {
    /// A replayed message.
    case entry(ReplayEntryReply)
    /// The end of a batch (`82`, or `83` when it reached the stream's end).
    case end(ReplayBatchEnd)
    /// A refusal.
    case error(ReplayFailure)

    /// The request the reply answers.
    public var requestID: UInt32 {
        switch self {
        case .entry(let entry): entry.requestID
        case .end(let end): end.requestID
        case .error(let failure): failure.requestID
        }
    }

    /// The reply's frames.
    public func frames() -> [[UInt8]] {
        switch self {
        case .entry(let entry):
            var out = ReplayFrameWriter(type: .entry)
            out.append(entry.requestID)
            out.append(entry.stream.rawValue)
            out.append(entry.sequence)
            return [out.bytes] + entry.frames
        case .end(let end):
            var out = ReplayFrameWriter(type: end.isStreamEnd ? .streamEnd : .batchEnd)
            out.append(end.requestID)
            out.append(end.stream.rawValue)
            out.append(end.first)
            out.append(end.last)
            out.append(end.next)
            out.append(end.count)
            return [out.bytes]
        case .error(let failure):
            var out = ReplayFrameWriter(type: .error)
            out.append(failure.requestID)
            out.bytes.append(failure.code.rawValue)
            out.append(failure.stream.rawValue)
            out.append(failure.first)
            out.append(failure.last)
            out.bytes += Array(failure.message.utf8)
            return [out.bytes]
        }
    }

    /// Reads a reply message (without the ROUTER's identity frame, as a DEALER receives it).
    ///
    /// An entry's frames are returned as received; they are checked as wire messages by the
    /// caller, like any message of the bus.
    /// - Throws: ``ReplayFrameError``.
    public static func decode(_ frames: [[UInt8]]) throws(ReplayFrameError) -> ReplayReply {
        guard let head = frames.first else { throw .frameCount(0) }
        var reader = try ReplayFrameReader(head, expecting: [.entry, .batchEnd, .streamEnd, .error])
        let requestID = try reader.uint32()
        switch reader.type {
        case .entry:
            let stream = try reader.uint64()
            let sequence = try reader.uint64()
            try reader.finish()
            guard frames.count >= 2 else { throw .frameCount(frames.count) }
            return .entry(
                ReplayEntryReply(
                    requestID: requestID, stream: StreamID(stream), sequence: sequence,
                    frames: Array(frames.dropFirst())))
        case .batchEnd, .streamEnd:
            let stream = try reader.uint64()
            let first = try reader.uint64()
            let last = try reader.uint64()
            let next = try reader.uint64()
            let count = try reader.uint32()
            try reader.finish()
            guard frames.count == 1 else { throw .frameCount(frames.count) }
            return .end(
                ReplayBatchEnd(
                    requestID: requestID, stream: StreamID(stream), first: first, last: last, next: next,
                    count: count))
        case .error:
            let rawCode = try reader.uint8()
            let stream = try reader.uint64()
            let first = try reader.uint64()
            let last = try reader.uint64()
            let text = reader.rest()
            guard frames.count == 1 else { throw .frameCount(frames.count) }
            guard let code = ReplayErrorCode(rawValue: rawCode) else { throw .unknownErrorCode(rawCode) }
            guard text.count <= ReplayFormat.maximumMessageLength,
                let message = String(validating: text, as: UTF8.self)
            else { throw .invalidText }
            return .error(
                ReplayFailure(
                    requestID: requestID, code: code, stream: StreamID(stream), first: first, last: last,
                    message: message))
        case .request:
            throw .unexpectedType(ReplayFormat.FrameType.request.rawValue)
        }
    }
}

/// Appends the little-endian fields of a replay frame.
struct ReplayFrameWriter {
    var bytes: [UInt8]

    init(type: ReplayFormat.FrameType) {
        bytes = [ReplayFormat.magic.0, ReplayFormat.magic.1, ReplayFormat.version, type.rawValue]
    }

    mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}

/// Reads the fields of a replay frame, checking the bounds of each.
struct ReplayFrameReader {
    let frame: [UInt8]
    let type: ReplayFormat.FrameType
    private var offset = 4

    init(_ frame: [UInt8], expecting types: Set<ReplayFormat.FrameType>) throws(ReplayFrameError) {
        guard frame.count >= 4 else { throw .truncated(needed: 4, available: frame.count) }
        guard frame[0] == ReplayFormat.magic.0, frame[1] == ReplayFormat.magic.1 else { throw .badMagic }
        guard frame[2] == ReplayFormat.version else { throw .unsupportedVersion(frame[2]) }
        guard let type = ReplayFormat.FrameType(rawValue: frame[3]), types.contains(type) else {
            throw .unexpectedType(frame[3])
        }
        self.frame = frame
        self.type = type
    }

    private mutating func take(_ count: Int) throws(ReplayFrameError) -> ArraySlice<UInt8> {
        guard frame.count - offset >= count else {
            throw .truncated(needed: offset + count, available: frame.count)
        }
        defer { offset += count }
        return frame[offset..<offset + count]
    }

    mutating func uint8() throws(ReplayFrameError) -> UInt8 { try take(1).first! }

    mutating func uint32() throws(ReplayFrameError) -> UInt32 {
        try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func uint64() throws(ReplayFrameError) -> UInt64 {
        try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func bytes(_ count: Int) throws(ReplayFrameError) -> [UInt8] { Array(try take(count)) }

    mutating func rest() -> [UInt8] {
        defer { offset = frame.count }
        return Array(frame[offset...])
    }

    func finish() throws(ReplayFrameError) {
        guard offset == frame.count else { throw .trailingBytes(count: frame.count - offset) }
    }
}
