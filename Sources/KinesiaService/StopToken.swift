public import KinesiaSystem
import Synchronization

/// Set when a long-running command should stop (SIGINT or SIGTERM arrived): the command's
/// socket loop checks ``isRequested`` between waits of at most a fraction of a second.
public final class StopToken: Sendable {
    private let raw = Atomic<Int32>(0)

    /// A token not yet requested.
    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { raw.load(ordering: .acquiring) != 0 }

    /// The signal that requested the stop (`nil` before, or when stopped without a signal).
    public var signal: ProcessSignal? {
        let value = raw.load(ordering: .acquiring)
        return value > 0 ? ProcessSignal(rawValue: value) : nil
    }

    /// Requests the stop.
    public func request(_ signal: ProcessSignal? = nil) {
        _ = raw.compareExchange(
            expected: 0, desired: signal?.rawValue ?? -1, ordering: .acquiringAndReleasing)
    }
}
