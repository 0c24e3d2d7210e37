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
        /// A replay server's word to the broker: the streams it serves (``ReplayServeFrame``).
        case serve = 0x10
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
