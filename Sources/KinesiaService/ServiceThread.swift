import Foundation
import Glibc
import KinesiaSystem

/// How every long-running process of the bus runs its service: the service's blocking loop on
/// a thread of its own (libzmq sockets block and are confined to one thread) while SIGINT and
/// SIGTERM ask it to stop through a ``StopToken``.
///
/// The first SIGINT or SIGTERM requests the stop (logged); the service finishes its loop within
/// the fraction of a second between its checks of the token, says goodbye on the bus, and
/// returns. A second SIGINT (Control-C twice) ends the process at once with status 1, after
/// `beforeForcedExit`; repeated SIGTERMs count as one (the kernel's parent-death signal may
/// come several times, see ``ParentDeathSignal``). The signals are watched before the service
/// starts.
///
/// ```swift
/// let events = try await ServiceThread.run(logger: log) { stop in
///     try consumer.consume(until: stop)
/// }
/// ```
public enum ServiceThread {
    /// Runs `service` on a dedicated thread until it returns.
    /// - Parameters:
    ///   - logger: Where the signals are logged.
    ///   - beforeForcedExit: Called before a second SIGINT ends the process (flush the outputs,
    ///     show the terminal's cursor again).
    ///   - service: The loop; it checks the token between waits of at most a fraction of a
    ///     second.
    /// - Returns: What `service` returns.
    /// - Throws: What `service` throws.
    public static func run<Result: Sendable>(
        logger: Logger, beforeForcedExit: @escaping @Sendable () -> Void = {},
        _ service: @escaping @Sendable (StopToken) throws -> Result
    ) async throws -> Result {
        let signals = SignalStream([.interrupt, .terminate])
        let token = StopToken()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals {
                    if token.isRequested {
                        guard signal == .interrupt else { continue }
                        logger.warning("\(signal) again: exiting at once")
                        beforeForcedExit()
                        exit(1)
                    }
                    // The stop first, whatever writing the log line costs.
                    token.request(signal)
                    logger.info("\(signal): stopping")
                }
            }
            defer { group.cancelAll() }
            return try await withCheckedThrowingContinuation { continuation in
                let thread = Thread {
                    continuation.resume(with: Swift.Result { try service(token) })
                }
                thread.name = "kinesia.bus"
                thread.start()
            }
        }
    }
}
