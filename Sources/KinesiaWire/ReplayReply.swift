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
    /// The broker refused the request: the client's key may not read the topic (or a server's
    /// key may not serve it). Only the broker's replay port says it (`docs/wire-format.md`).
    case notAllowed = 5

    /// The code's name: `malformedRequest`, `unsupportedVersion`, `unknownStream`, `notRetained`,
    /// `notAllowed`.
    public var description: String {
        switch self {
        case .malformedRequest: "malformedRequest"
        case .unsupportedVersion: "unsupportedVersion"
        case .unknownStream: "unknownStream"
        case .notRetained: "notRetained"
        case .notAllowed: "notAllowed"
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
        case .request, .serve:
            throw .unexpectedType(reader.type.rawValue)
        }
    }
}
