/// When a worker checkpoints each camera's sessions: about every ``interval``, one camera at a
/// time. A camera's first checkpoint is due at its share of the interval (the k-th of n cameras
/// at k/n of it), and each next one an interval after its last, so the cameras' checkpoints come
/// an n-th of the interval apart instead of all together: due at once, a worker of 64 cameras
/// took and handed its journal's thread 64 checkpoints every interval, a burst of encoding and
/// file writes that took the processor from the live loop at high rates.
///
/// A value with the time passed in: the worker asks it once per turn of its loop, for the next
/// camera in turn.
///
/// ```swift
/// var schedule = CheckpointSchedule(interval: .seconds(2))
/// if schedule.isDue(camera: "cam3", index: 3, of: 64, poses: core.poses, at: now) {
///     schedule.taken(camera: "cam3", poses: core.poses, at: now)
/// }
/// ```
struct CheckpointSchedule: Sendable {
    /// About how often each camera is checkpointed.
    let interval: Duration
    private var last: [String: (poses: Int, at: Duration)] = [:]

    init(interval: Duration) {
        self.interval = interval
    }

    /// Whether `camera`, the `index`-th of `count` cameras, is due at `now`: its turn in the
    /// interval has come, and the worker analysed a pose since its last checkpoint (`poses`: the
    /// worker's count of poses analysed).
    func isDue(camera: String, index: Int, of count: Int, poses: Int, at now: Duration) -> Bool {
        guard let last = last[camera] else {
            return now >= interval * (index + 1) / max(1, count)
        }
        return now >= last.at + interval && last.poses != poses
    }

    /// Records that `camera` was checkpointed at `now`, after `poses` poses.
    mutating func taken(camera: String, poses: Int, at now: Duration) {
        last[camera] = (poses, now)
    }
}
