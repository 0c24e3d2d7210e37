/// "I serve these streams": what a replay server (a journaling ingest or worker) tells the
/// broker's replay port on a TCP bus with keys, about every half second, so that the broker
/// knows where to send each request (`docs/wire-format.md`, section 11, "Through the broker").
///
/// | Offset | Size | Field |
/// |-------:|-----:|-------|
/// | 0 | 4 | `4b 52 01 10` |
/// | 4 | 2 | stream count `c` (UInt16, at most ``maximumStreams``) |
/// | 6 | ... | `c` times: stream id (UInt64), topic length `n` (UInt8), topic (`n` bytes) |
///
/// A server with more streams sends several frames (``frames(for:)``); the broker keeps what
/// each one says, per stream.
///
/// ```swift
/// for frame in ReplayServeFrame.frames(for: source.streams().map { ($0.topic, $0.stream) }) {
///     _ = try dealer.trySend([frame])
/// }
/// ```
public struct ReplayServeFrame: Hashable, Sendable {
    /// The most streams one frame lists (each at most 264 bytes: a frame stays under 34 KiB).
    public static let maximumStreams = 128

    /// One stream served.
    public struct Stream: Hashable, Sendable {
        /// Its topic.
        public var topic: Topic
        /// Its id.
        public var stream: StreamID

        /// Makes a value.
        public init(topic: Topic, stream: StreamID) {
            self.topic = topic
            self.stream = stream
        }
    }

    /// The streams this frame lists.
    public var streams: [Stream]

    /// Makes a frame of at most ``maximumStreams`` streams (the rest are left out: split with
    /// ``frames(for:)``).
    public init(streams: [Stream]) {
        self.streams = Array(streams.prefix(Self.maximumStreams))
    }

    /// The frame.
    public func encoded() -> [UInt8] {
        var out = ReplayFrameWriter(type: .serve)
        let count = UInt16(streams.count)
        out.bytes += [UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8)]
        for entry in streams {
            let topic = entry.topic.bytes
            out.append(entry.stream.rawValue)
            out.bytes.append(UInt8(topic.count))
            out.bytes += topic
        }
        return out.bytes
    }

    /// The frames that list `streams`, ``maximumStreams`` at most each (one empty frame when
    /// there is none: the server still says it is there).
    public static func frames(for streams: [Stream]) -> [[UInt8]] {
        guard !streams.isEmpty else { return [ReplayServeFrame(streams: []).encoded()] }
        return stride(from: 0, to: streams.count, by: maximumStreams).map { start in
            ReplayServeFrame(streams: Array(streams[start..<min(start + maximumStreams, streams.count)]))
                .encoded()
        }
    }

    /// Reads a serve frame.
    /// - Throws: ``ReplayFrameError``: truncated, foreign, of another version or type, too many
    ///   streams, a bad topic, trailing bytes.
    public static func decode(_ frame: [UInt8]) throws(ReplayFrameError) -> ReplayServeFrame {
        var reader = try ReplayFrameReader(frame, expecting: [.serve])
        let low = try reader.uint8()
        let high = try reader.uint8()
        let count = Int(low) | Int(high) << 8
        guard count <= maximumStreams else { throw .frameCount(count) }
        var streams: [Stream] = []
        streams.reserveCapacity(count)
        for _ in 0..<count {
            let stream = try reader.uint64()
            let length = Int(try reader.uint8())
            let bytes = try reader.bytes(length)
            do {
                streams.append(Stream(topic: try Topic(parsing: bytes), stream: StreamID(stream)))
            } catch {
                throw .invalidTopic(error)
            }
        }
        try reader.finish()
        return ReplayServeFrame(streams: streams)
    }
}
