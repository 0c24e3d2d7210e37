public import KinesiaSystem
import Synchronization

/// Set when a long-running command should stop (SIGINT or SIGTERM arrived): the graceful
/// shutdown's input of a ``Service``.
///
/// A blocking socket loop checks ``isRequested`` between waits of at most a fraction of a
/// second; an asynchronous service that waits on something else is told at once through
/// ``whenRequested(_:)``.
///
/// ```swift
/// let stop = StopToken()
/// stop.whenRequested { signal in supervisor.requestShutdown(signal: signal) }
/// stop.request(.terminate)   // the handler runs now, once
/// ```
public final class StopToken: Sendable {
    private let raw = Atomic<Int32>(0)
    /// The handlers waiting for the request (`nil` once they have been called).
    private let handlers = Mutex<[@Sendable (ProcessSignal?) -> Void]?>([])

    /// A token not yet requested.
    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { raw.load(ordering: .acquiring) != 0 }

    /// The signal that requested the stop (`nil` before, or when stopped without a signal).
    public var signal: ProcessSignal? {
        let value = raw.load(ordering: .acquiring)
        return value > 0 ? ProcessSignal(rawValue: value) : nil
    }

    /// Requests the stop; only the first request counts (its signal is kept, the handlers run
    /// once, on the caller's thread).
    public func request(_ signal: ProcessSignal? = nil) {
        guard
            raw.compareExchange(
                expected: 0, desired: signal?.rawValue ?? -1, ordering: .acquiringAndReleasing
            ).exchanged
        else { return }
        let waiting = handlers.withLock { handlers in
            defer { handlers = nil }
            return handlers ?? []
        }
        for handler in waiting { handler(signal) }
    }

    /// Calls `handler` with the request's signal when the stop is requested, or at once (on
    /// this thread) when it already was.
    ///
    /// - Parameter handler: Called once, outside any lock; it must not block.
    public func whenRequested(_ handler: @escaping @Sendable (ProcessSignal?) -> Void) {
        let waits = handlers.withLock { handlers in
            guard handlers != nil else { return false }
            handlers?.append(handler)
            return true
        }
        if !waits { handler(signal) }
    }
}
