/// When a worker publishes a session's snapshot: after the first pose, whenever the rep counts
/// change, and otherwise at most `rate` times a second of pose time. A pure function of the
/// pose sequence, so the same poses give the same snapshots. `Codable` for a session's
/// checkpoint: it encodes its interval and what it last published, every double bit for bit
/// through `CheckpointCodec`.
struct SnapshotThrottle: Sendable, Hashable, Codable {
    /// The rep counts of a published snapshot: clean, rejected.
    private struct Counts: Sendable, Hashable, Codable {
        var clean: Int
        var rejected: Int
    }

    /// The shortest pose-time interval between two snapshots without a count change.
    let interval: Double
    private var lastTime: Double?
    private var lastCounts: Counts?

    /// Rounding slack, so that frames exactly `interval` apart (60 fps at 15 Hz: every fourth)
    /// are not skipped for a last-bit difference.
    static let tolerance = 1e-6

    init(rate: Double) {
        interval = 1 / rate
    }

    /// Whether to publish the snapshot taken after the pose at `time`, whose rep counts are
    /// these; records it if so. Called on every pose analysed, with the two counts read in
    /// place: passing the analyzer's snapshot copied it (its set, arrays and last rep retained
    /// and released, about 3 % of a worker's loop).
    mutating func shouldPublish(repCount: Int, rejectedCount: Int, at time: Double) -> Bool {
        let counts = Counts(clean: repCount, rejected: rejectedCount)
        let changed = lastCounts.map { $0 != counts } ?? true
        let due = lastTime.map { time - $0 >= interval - Self.tolerance || time < $0 } ?? true
        guard changed || due else { return false }
        lastTime = time
        lastCounts = counts
        return true
    }
}
