import Glibc

/// The wall clock (`CLOCK_REALTIME`), for what is compared across processes and restarts (when a
/// file was written, a message sent): durations measured inside a process use a `Clock`.
///
/// ```swift
/// let sentAt = WallClock.now   // since 1970-01-01 UTC
/// ```
public enum WallClock {
    /// The time since the epoch.
    public static var now: Duration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
    }
}
