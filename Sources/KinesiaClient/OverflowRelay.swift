/// Hands values to an `AsyncStream` whose buffer keeps the oldest values
/// (`.bufferingOldest`), and turns what the full buffer refused into one
/// ``BusGap/overflow(dropped:)`` value, yielded as soon as there is room again: a consumer that
/// falls behind sees where messages were dropped and how many, instead of losing them silently.
///
/// A value type given the stream's continuation: tested with no thread and no socket.
struct OverflowRelay {
    /// Values refused by the full buffer and not yet reported.
    private(set) var pendingDrops = 0
    /// Every value refused so far (reported or not).
    private(set) var totalDrops = 0

    /// Yields `message` (after the pending overflow report, if any).
    /// - Parameters:
    ///   - message: The next value.
    ///   - continuation: The stream's continuation, whose buffer keeps the oldest values.
    /// - Returns: `false` when the stream has ended (the consumer is gone): stop receiving.
    mutating func send(_ message: BusMessage, to continuation: AsyncStream<BusMessage>.Continuation) -> Bool {
        if pendingDrops > 0 {
            switch continuation.yield(.gap(.overflow(dropped: pendingDrops))) {
            case .enqueued: pendingDrops = 0
            case .dropped:
                drop()
                return true
            case .terminated: return false
            @unknown default: return false
            }
        }
        switch continuation.yield(message) {
        case .enqueued: return true
        case .dropped:
            drop()
            return true
        case .terminated: return false
        @unknown default: return false
        }
    }

    private mutating func drop() {
        pendingDrops += 1
        totalDrops += 1
    }
}
