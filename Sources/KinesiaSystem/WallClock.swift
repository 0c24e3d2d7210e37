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
        let now = read()
        return .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
    }

    /// The time since the epoch in nanoseconds (0 for a clock set before 1970).
    public static var nanosecondsSinceEpoch: UInt64 {
        let now = read()
        return UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
    }

    private static func read() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}
