import Glibc

/// Ends the process at once, for the one place that must (a service that did not stop by its
/// deadline, Control-C twice): `exit`, which flushes C's stdio and runs `atexit` handlers.
///
/// ```swift
/// ProcessExit.now(status: 1)
/// ```
public enum ProcessExit {
    /// Ends the process with `status`.
    public static func now(status: Int32) -> Never {
        exit(status)
    }
}
