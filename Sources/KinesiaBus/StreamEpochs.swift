/// The highest epoch seen per stream, and whether a message's epoch may go on: the broker's
/// fence against a worker that publishes for a session it no longer holds (a value, no I/O).
///
/// A stream is named by the 8-byte stream id of a message's header (a pool worker's session
/// publishes its events, snapshots and run records on one stream id, under one assignment
/// epoch). An epoch equal to or above the highest seen is admitted (and becomes the highest);
/// one below it is stale. At most ``capacity`` streams are kept: when one more arrives, every
/// stream is forgotten (counted in ``forgotten``), which only lets through the next message of a
/// stream whatever its epoch, never refuses one wrongly.
///
/// ```swift
/// var epochs = StreamEpochs()
/// epochs.admit(stream: 0x0123, epoch: 5)   // true
/// epochs.admit(stream: 0x0123, epoch: 4)   // false: a fenced holder's message
/// ```
public struct StreamEpochs: Sendable {
    /// The tag of an epoch frame, `"KE"` (`EpochFrame` in `KinesiaWire`).
    public static let frameTag: (UInt8, UInt8) = (0x4B, 0x45)
    /// An epoch frame's size: the tag and a UInt64.
    public static let frameSize = 10
    /// The offset of the stream id in a payload (after magic, version and kind).
    public static let streamOffset = 4

    /// The most streams kept before all are forgotten.
    public let capacity: Int
    /// How many times every stream was forgotten because ``capacity`` was reached.
    public private(set) var forgotten = 0
    /// The streams kept now.
    public var count: Int { highest.count }

    private var highest: [UInt64: UInt64] = [:]

    /// A ledger of at most `capacity` streams.
    public init(capacity: Int = 65_536) {
        self.capacity = max(1, capacity)
    }

    /// Whether a message of `stream` at `epoch` may go on; records `epoch` when it does.
    public mutating func admit(stream: UInt64, epoch: UInt64) -> Bool {
        if let seen = highest[stream] {
            guard epoch >= seen else { return false }
            if epoch > seen { highest[stream] = epoch }
            return true
        }
        if highest.count >= capacity {
            highest.removeAll(keepingCapacity: true)
            forgotten += 1
        }
        highest[stream] = epoch
        return true
    }

    /// The epoch an epoch frame carries, or `nil` for a frame of another size or tag.
    public static func epoch(inFrame frame: UnsafeRawBufferPointer) -> UInt64? {
        guard frame.count == frameSize, frame[0] == frameTag.0, frame[1] == frameTag.1 else { return nil }
        return UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
    }

    /// The stream id of a payload, or `nil` when it is too short to hold a header's.
    public static func stream(ofPayload payload: UnsafeRawBufferPointer) -> UInt64? {
        guard payload.count >= streamOffset + 8 else { return nil }
        return UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: streamOffset, as: UInt64.self))
    }
}
