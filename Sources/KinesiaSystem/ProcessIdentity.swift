import Glibc

/// Who this process is: its id and its user, for names and checks that need them (a pid file,
/// a per-user directory, the broker's own user).
///
/// ```swift
/// let lock = "/tmp/kinesia-\(ProcessIdentity.userID)"
/// ```
public enum ProcessIdentity {
    /// The process id (`getpid`).
    public static var id: Int32 { getpid() }
    /// The real user id (`getuid`).
    public static var userID: UInt32 { getuid() }
    /// The effective user id (`geteuid`): the user whose rights the process has.
    public static var effectiveUserID: UInt32 { geteuid() }
    /// The machine's host name (`gethostname`; `nil` when it cannot be read).
    public static var hostName: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
