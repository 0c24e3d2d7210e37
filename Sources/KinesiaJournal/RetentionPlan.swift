/// Which segments retention deletes: a pure function of the segments' sizes, ages and whether
/// a writer holds their stream.
///
/// Rules, oldest segment first (by last change): a segment older than the maximum age is
/// deleted; then, while the total is over the maximum size, the oldest remaining are deleted.
/// The last segment of a stream that a writer holds is never deleted (it is being written).
///
/// ```swift
/// let plan = RetentionPlan(segments: segments, maximumBytes: 1 << 30, maximumAge: .seconds(86_400),
///                          now: now)
/// for segment in plan.deleted { remove(segment) }
/// ```
public struct RetentionPlan: Hashable, Sendable {
    /// One segment as retention sees it.
    public struct Segment: Hashable, Sendable {
        /// Its stream.
        public var stream: JournalStream
        /// Its file name.
        public var name: String
        /// Its size in bytes.
        public var bytes: Int
        /// Its last change, as a duration since the epoch.
        public var changedAt: Duration
        /// Whether it is its stream's last segment and a writer holds the stream.
        public var isBeingWritten: Bool

        /// Makes a segment.
        public init(
            stream: JournalStream, name: String, bytes: Int, changedAt: Duration, isBeingWritten: Bool
        ) {
            self.stream = stream
            self.name = name
            self.bytes = bytes
            self.changedAt = changedAt
            self.isBeingWritten = isBeingWritten
        }
    }

    /// The segments to delete, oldest first.
    public var deleted: [Segment] = []
    /// The bytes kept.
    public var keptBytes = 0

    /// Plans retention.
    public init(segments: [Segment], maximumBytes: Int, maximumAge: Duration, now: Duration) {
        let ordered = segments.sorted { ($0.changedAt, $0.name) < ($1.changedAt, $1.name) }
        var total = ordered.reduce(0) { $0 + $1.bytes }
        for segment in ordered where !segment.isBeingWritten {
            let tooOld = now - segment.changedAt > maximumAge
            guard tooOld || total > maximumBytes else { continue }
            deleted.append(segment)
            total -= segment.bytes
        }
        keptBytes = total
    }
}
