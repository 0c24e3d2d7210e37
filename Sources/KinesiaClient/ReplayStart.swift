import KinesiaWire

/// Where a consumer starts on a stream it has no cursor position for.
public enum ReplayStart: Hashable, Sendable {
    /// From the first message of every stream (what is no longer retained is reported lost).
    case beginning
    /// From the first message received live; a stream only announced starts after its last.
    case now
    /// From this sequence number on every stream.
    case sequence(UInt64)
}
