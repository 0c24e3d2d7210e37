import Foundation
import Glibc

/// The process's limit of open files (`RLIMIT_NOFILE`) and how many it has open.
public enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit (a broker holds one descriptor per connection)
    /// and returns the limit now in force (1,024 when it cannot be read).
    public static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// The descriptors the process has open (the entries of `/proc/self/fd`); `Int.max` when
    /// the directory cannot be read, which is what happens when no descriptor is left to read it.
    public static func openCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? Int.max
    }
}
