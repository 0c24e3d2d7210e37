/// What a worker on another box needs to go on with a run that another worker began: the
/// stream its events are published on, and every pose the run analysed, from its first, with
/// the holes its live analysis gave up.
///
/// A pool worker tells it in each report (``WorkerReport/Running/resume``, and at once when it
/// changes: a run's first pose, a new pose stream, a hole given up); the coordinator keeps the
/// latest of each run and gives it with the session to the worker it places it on
/// (``WorkerAssignment/resumes``). A worker whose own state directory knows the run as far (the
/// same box) resumes from its checkpoint as before; one that does not (another box, or a box
/// that hosted the run earlier) rebuilds the run from its first pose on the same stream, so its
/// events get the numbers and the bytes they had: consumers take each once.
public struct RunResume: Hashable, Sendable {
    /// One pose stream the run read: from ``first`` through ``last`` (`nil`: still going), with
    /// the ranges the live analysis gave up (half-open, in order).
    public struct Segment: Hashable, Sendable {
        /// The camera ingest's stream id.
        public var stream: UInt64
        /// The first sequence number analysed.
        public var first: UInt64
        /// The last one, once a later stream took over.
        public var last: UInt64?
        /// The holes given up, `from..<upTo`.
        public var skipped: [Range<UInt64>]

        /// A segment.
        public init(stream: UInt64, first: UInt64, last: UInt64? = nil, skipped: [Range<UInt64>] = []) {
            self.stream = stream
            self.first = first
            self.last = last
            self.skipped = skipped
        }
    }

    /// The most holes a report carries for one run: a run past it cannot be rebuilt elsewhere
    /// exactly, and is told without segments (a worker given none starts a new stream).
    public static let maximumSkipped = 4096

    /// The stream the run's events, snapshots and run records are published on.
    public var stream: UInt64
    /// The run's pose segments from its first pose, oldest first (empty: no pose yet).
    public var segments: [Segment]

    /// A resume.
    public init(stream: UInt64, segments: [Segment]) {
        self.stream = stream
        self.segments = segments
    }

    /// Whether `self` knows at least what `other` does: the same event stream, the same
    /// segments as far as `other` has them (the same streams, from the same first poses) and
    /// every hole `other` gave up. A worker whose own records cover the coordinator's resumes
    /// from them (and its checkpoints).
    public func covers(_ other: RunResume) -> Bool {
        guard stream == other.stream, segments.count >= other.segments.count else { return false }
        for (mine, theirs) in zip(segments, other.segments) {
            guard mine.stream == theirs.stream, mine.first == theirs.first,
                theirs.skipped.allSatisfy({ mine.skipped.contains($0) })
            else { return false }
        }
        return true
    }
}
