public import KinesiaWire

/// The replay server's decisions, with no I/O: the replies to one request frame.
///
/// A readable request gets at most `min(limit, maximumBatch)` entries and one end frame
/// (``ReplayReply/end(_:)``), or one error. A frame that is not a readable request (foreign,
/// truncated, another version, a reply sent as a request...) gets one error, never a crash.
///
/// ```swift
/// let replies = ReplayResponder.answer(frame, from: source)
/// ```
public enum ReplayResponder {
    /// The replies to `frame`, and a counter name for what happened: `served`, or the error code
    /// (`malformedRequest`, `unsupportedVersion`, `unknownStream`, `notRetained`).
    public static func answer(
        _ frame: [UInt8], from source: some ReplaySource, maximumBatch: UInt32 = ReplayFormat.maximumBatch
    ) -> (replies: [ReplayReply], outcome: String) {
        let request: ReplayRequest
        do {
            request = try ReplayRequest.decode(frame)
        } catch {
            let code: ReplayErrorCode =
                if case .unsupportedVersion = error { .unsupportedVersion } else { .malformedRequest }
            let failure = ReplayFailure(
                requestID: ReplayRequest.requestID(ofMalformed: frame), code: code, stream: StreamID(0),
                first: 0,
                last: 0, message: error.description)
            return ([.error(failure)], code.description)
        }
        let limit = Int(Swift.min(request.limit, Swift.max(1, maximumBatch)))
        guard let info = source.stream(topic: request.topic, stream: request.stream) else {
            return (
                [
                    .error(
                        ReplayFailure(
                            requestID: request.requestID, code: .unknownStream,
                            stream: request.stream ?? StreamID(0),
                            first: 0, last: 0,
                            message: "no stream \(request.stream?.description ?? "") of \(request.topic)"
                        ))
                ], ReplayErrorCode.unknownStream.description
            )
        }
        let entries: [ReplayEntry]
        do {
            entries = try source.entries(
                topic: request.topic, stream: info.stream, from: request.from, limit: limit)
        } catch {
            let (code, first, last): (ReplayErrorCode, UInt64, UInt64) =
                switch error {
                case .unknownStream: (.unknownStream, 0, 0)
                case .notRetained(let first, let last): (.notRetained, first, last)
                }
            let message =
                code == .notRetained
                ? "sequence \(request.from) is no longer retained; the first available is \(first)"
                : "no stream \(info.stream) of \(request.topic)"
            return (
                [
                    .error(
                        ReplayFailure(
                            requestID: request.requestID, code: code, stream: info.stream, first: first,
                            last: last,
                            message: message))
                ], code.description
            )
        }
        var replies = entries.map {
            ReplayReply.entry(
                ReplayEntryReply(
                    requestID: request.requestID, stream: info.stream, sequence: $0.sequence,
                    frames: $0.frames))
        }
        // Total for every sequence number (a stream may reach UInt64.max): `next` saturates there.
        let afterLast = info.last == .max ? UInt64.max : info.last + 1
        let next =
            entries.last.map { $0.sequence == .max ? UInt64.max : $0.sequence + 1 }
            ?? Swift.max(request.from, info.first)
        replies.append(
            .end(
                ReplayBatchEnd(
                    requestID: request.requestID, stream: info.stream, first: info.first, last: info.last,
                    next: Swift.min(next, afterLast), count: UInt32(clamping: entries.count))))
        return (replies, "served")
    }
}
