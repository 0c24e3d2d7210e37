import Foundation
import KinesiaSystem
import Synchronization

/// How every long-running process of the bus runs its service: the service's blocking loop on
/// a thread of its own (libzmq sockets block and are confined to one thread) while SIGINT and
/// SIGTERM ask it to stop through a ``StopToken``.
///
/// The stop follows ``ServiceShutdown``: the first SIGINT or SIGTERM requests it (logged); the
/// service finishes its loop within the fraction of a second between its checks of the token,
/// says goodbye on the bus, and returns. One that has not returned `stopDeadline` after the
/// request (a loop stuck in a call that does not return) ends the process with status 1, as a
/// second SIGINT (Control-C twice) does at once, after `beforeForcedExit` and a log line
/// saying why. The signals are watched before the service starts.
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
    ///   - stopDeadline: How long the service has to return once asked to stop.
    ///   - clock: What the deadline is timed on.
    ///   - beforeForcedExit: Called before a forced exit ends the process (flush the outputs,
    ///     show the terminal's cursor again).
    ///   - service: The loop; it checks the token between waits of at most a fraction of a
    ///     second.
    /// - Returns: What `service` returns.
    /// - Throws: What `service` throws.
    public static func run<Result: Sendable>(
        logger: Logger, stopDeadline: Duration = ServiceShutdown.defaultDeadline,
        clock: some Clock<Duration> = ContinuousClock(),
        beforeForcedExit: @escaping @Sendable () -> Void = {},
        _ service: @escaping @Sendable (StopToken) throws -> Result
    ) async throws -> Result {
        let signals = SignalStream([.interrupt, .terminate])
        let token = StopToken()
        let elapsed = ElapsedClock(clock)
        let shutdown = SharedShutdown(ServiceShutdown(deadline: stopDeadline))
        @Sendable func perform(_ action: ServiceShutdown.Action) {
            switch action {
            case .none:
                break
            case .requestStop(let signal):
                // The stop first, whatever writing the log line costs.
                token.request(signal)
                logger.info("\(signal): stopping")
            case .forceExit(let reason):
                logger.warning(reason)
                beforeForcedExit()
                ProcessExit.now(status: 1)
            }
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { deadlines in
                    for await signal in signals {
                        let action = shutdown.state.withLock { $0.received(signal, now: elapsed.now) }
                        perform(action)
                        guard case .requestStop = action else { continue }
                        deadlines.addTask {
                            // The stop's deadline: cancelled with the group when the service
                            // returns in time.
                            guard let end = shutdown.state.withLock({ $0.stopDeadline }),
                                (try? await elapsed.sleep(until: end)) != nil
                            else { return }
                            perform(shutdown.state.withLock { $0.tick(now: elapsed.now) })
                        }
                    }
                }
            }
            defer { group.cancelAll() }
            return try await DedicatedThread.run(named: "kinesia.bus") {
                defer { shutdown.state.withLock { $0.serviceReturned() } }
                return try service(token)
            }
        }
    }
}

/// The shutdown's state, shared by the signal loop and the deadline's task.
private final class SharedShutdown: Sendable {
    let state: Mutex<ServiceShutdown>

    init(_ shutdown: ServiceShutdown) { state = Mutex(shutdown) }
}
