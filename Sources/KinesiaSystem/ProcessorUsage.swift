import Glibc

/// How much processor time this process has used, read at one moment: the difference of two
/// samples over the time between them is its load, in processors.
///
/// ```swift
/// let before = ProcessorUsage.sample()
/// // ... a second later
/// let processors = (ProcessorUsage.sample().processSeconds - before.processSeconds) / 1
/// ```
public struct ProcessorUsage: Hashable, Sendable {
    /// The processor time this process used since it started, every thread
    /// (`CLOCK_PROCESS_CPUTIME_ID`).
    public var processSeconds: Double

    /// A sample of a given figure (tests, or another source).
    public init(processSeconds: Double) {
        self.processSeconds = processSeconds
    }

    /// The figure now.
    public static func sample() -> ProcessorUsage {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return ProcessorUsage(processSeconds: Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9)
    }

    /// The processors online.
    public static var onlineProcessors: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
}
