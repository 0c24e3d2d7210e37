public import KinesiaWire

/// A run of one pose stream that a session analysed: from sequence number ``first`` of
/// ``stream`` through ``last`` (`nil`: still going).
///
/// A session's pose history is a list of segments, one per pose stream it read (a new stream
/// id on the camera's topic closes the current segment and opens the next). The state directory
/// keeps the list, so that a restarted worker replays exactly the poses the session analysed.
public struct PoseSegment: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The ingest's stream id.
    public var stream: StreamID
    /// The first sequence number analysed.
    public var first: UInt64
    /// The last sequence number analysed, once a later stream took over; `nil` while open.
    public var last: UInt64?
    /// Holes the live analysis gave up on (not filled within the feed's wait), in order: a
    /// rebuild skips them too, so that it analyses exactly what the live run analysed.
    public var skipped: [Range<UInt64>]

    /// Makes a segment.
    public init(stream: StreamID, first: UInt64, last: UInt64? = nil, skipped: [Range<UInt64>] = []) {
        self.stream = stream
        self.first = first
        self.last = last
        self.skipped = skipped
    }

    /// `0123456789abcdef 0...41`, or `0123456789abcdef 7...` while open; `(2 holes skipped)`
    /// after it when the live run gave up on some.
    public var description: String {
        "\(stream) \(first)...\(last.map(String.init) ?? "")"
            + (skipped.isEmpty ? "" : " (\(skipped.count) hole\(skipped.count == 1 ? "" : "s") skipped)")
    }

    /// The skipped range that holds `sequence`, if any.
    func skippedRange(holding sequence: UInt64) -> Range<UInt64>? {
        skipped.first { $0.contains(sequence) }
    }

    /// The first skipped range at or after `sequence`.
    func nextSkipped(from sequence: UInt64) -> Range<UInt64>? {
        skipped.first { $0.upperBound > sequence }
    }

    /// Keeps `range` among the skipped ones, in order of their first sequence number, unless it
    /// is there already. Holes are given up in order, so the common case is an append after one
    /// comparison: a worker fed holes on purpose, thousands a session, spends no time on a sort
    /// or a scan per hole.
    /// - Returns: Whether it was added.
    @discardableResult
    mutating func addSkipped(_ range: Range<UInt64>) -> Bool {
        if let last = skipped.last, last.lowerBound >= range.lowerBound {
            // Out of order or already there: the first range not before it.
            var low = 0
            var high = skipped.count
            while low < high {
                let middle = (low + high) / 2
                if skipped[middle].lowerBound < range.lowerBound { low = middle + 1 } else { high = middle }
            }
            var index = low
            while index < skipped.count, skipped[index].lowerBound == range.lowerBound {
                if skipped[index] == range { return false }
                index += 1
            }
            skipped.insert(range, at: index)
            return true
        }
        skipped.append(range)
        return true
    }
}

extension PoseSegment {
    /// A run's segments from its first pose (`history`) brought up to the feed's (`recent`),
    /// which begin later when a checkpoint's restore pruned them: the history's segments
    /// before the feed's first stream are kept, that stream's segment keeps the earlier first
    /// pose and every hole given up on either side, and the feed's later segments follow. A feed
    /// whose first stream the history does not have (a new run) is taken as it is.
    public static func history(_ history: [PoseSegment], extendedBy recent: [PoseSegment]) -> [PoseSegment] {
        guard let head = recent.first, let index = history.lastIndex(where: { $0.stream == head.stream })
        else {
            return recent
        }
        var merged = history[index]
        merged.first = min(merged.first, head.first)
        merged.last = head.last
        for range in head.skipped where !merged.skipped.contains(range) { merged.skipped.append(range) }
        merged.skipped.sort { $0.lowerBound < $1.lowerBound }
        return Array(history[..<index]) + [merged] + recent.dropFirst()
    }
}
