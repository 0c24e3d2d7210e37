import Glibc

/// Sleeping on the calling thread, for the loops that are threads of their own (not tasks):
/// `nanosleep`, resumed after a signal until the whole duration has passed.
///
/// ```swift
/// ThreadSleep.sleep(.milliseconds(20))
/// ```
public enum ThreadSleep {
    /// Sleeps `duration` (nothing for zero or less).
    public static func sleep(_ duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
