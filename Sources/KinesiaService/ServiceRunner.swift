public import KinesiaSystem
import Synchronization

/// How every `kinesia` process runs its long-running part: the ``Service`` in a task group
/// while the process's signals are watched, a graceful stop on the first, a forced end after a
/// deadline or on a second Control-C.
///
/// The stop follows ``ServiceShutdown``: the first SIGINT or SIGTERM (or another signal the
/// caller watches, such as SIGHUP) requests it through the service's ``StopToken`` (and
/// `SIGTERM: stopping` is logged). The service then finishes what it holds and returns. One
/// that has not returned ``stopDeadline`` after the request, or when a second SIGINT comes, is
/// ended by force, as ``forcedEnd`` says: the process exits with status 1 (a blocking loop
/// cannot be cancelled), or the service's task is cancelled (the supervisor of `kinesia up`
/// then kills its children at once and still waits for them). Repeated SIGTERMs and SIGHUPs
/// count as one. Cancelling the task that runs ``run(_:signals:)`` requests the stop and
/// cancels the service.
///
/// ```swift
/// let service = BlockingService { stop in try broker.run(until: stop) }
/// try await ServiceRunner(logger: log).run(service)
/// ```
///
/// Time is read on the runner's clock (a ``ManualClock`` in tests) and the signals can be any
/// sequence: the tests pass their own.
public struct ServiceRunner: Sendable {
    /// How a service that must end at once is ended.
    public enum ForcedEnd: Sendable {
        /// Log the reason, call `beforeExit` (flush the outputs, show the terminal's cursor
        /// again), and end the process with status 1: for a ``BlockingService``, whose thread
        /// cannot be cancelled.
        case exitProcess(beforeExit: @Sendable () -> Void)
        /// Cancel the task that runs the service: for a service that ends what it runs at once
        /// under cancellation and returns.
        case cancelService
    }

    /// Where the stop's request and a forced end are logged (`nil`: the service says it itself).
    public let logger: Logger?
    /// How long the service has to return once asked to stop (`nil`: no limit, the service
    /// keeps its own).
    public let stopDeadline: Duration?
    /// What a forced end does.
    public let forcedEnd: ForcedEnd
    /// Starts the runner's time at the start of a run.
    private let startTime: @Sendable () -> ElapsedClock
    /// Ends the process (a test records the call instead).
    var exitProcess: @Sendable (Int32) -> Void = { ProcessExit.now(status: $0) }

    /// A runner.
    /// - Parameters:
    ///   - logger: Where the stop's request and a forced end are logged.
    ///   - stopDeadline: How long the service has to return once asked to stop.
    ///   - forcedEnd: What a forced end does.
    ///   - clock: What the deadline is timed on.
    public init(
        logger: Logger?, stopDeadline: Duration? = ServiceShutdown.defaultDeadline,
        forcedEnd: ForcedEnd = .exitProcess(beforeExit: {}), clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.logger = logger
        self.stopDeadline = stopDeadline
        self.forcedEnd = forcedEnd
        startTime = { ElapsedClock(clock) }
    }

    /// Runs `service` until it returns, stopping it on SIGINT and SIGTERM (watched from now on).
    /// - Parameter service: The service.
    /// - Returns: The service's outcome.
    /// - Throws: What the service throws.
    public func run<S: Service>(_ service: S) async throws -> S.Outcome {
        try await run(service, signals: SignalStream([.interrupt, .terminate]))
    }

    /// Runs `service` until it returns, stopping it on `signals`.
    /// - Parameters:
    ///   - service: The service.
    ///   - signals: The process's signals (a ``SignalStream`` made before anything that a
    ///     signal must not end has started).
    /// - Returns: The service's outcome.
    /// - Throws: What the service throws.
    public func run<S: Service>(
        _ service: S, signals: some AsyncSequence<ProcessSignal, Never> & Sendable
    ) async throws -> S.Outcome {
        let token = StopToken()
        let elapsed = startTime()
        let shutdown = SharedShutdown(ServiceShutdown(deadline: stopDeadline))
        // Unbounded: a few signals (a SignalStream keeps 8), one deadline, one end.
        let (inputs, input) = AsyncStream<RunnerInput>.makeStream(bufferingPolicy: .unbounded)
        return try await withThrowingTaskGroup(of: Void.self) { watch in
            // The signals, outside the service's group: a forced end that cancels the service
            // leaves them watched (a third Control-C does not end the process by default).
            watch.addTask {
                for await signal in signals { input.yield(.signal(signal)) }
            }
            defer { watch.cancelAll() }
            return try await withThrowingTaskGroup(of: RunnerChild<S.Outcome>.self) { group in
                group.addTask {
                    defer {
                        shutdown.state.withLock { $0.serviceReturned() }
                        input.yield(.serviceEnded)
                    }
                    return .service(try await service.run(until: token))
                }
                var ended = false
                for await next in inputs {
                    let action: ServiceShutdown.Action
                    switch next {
                    case .signal(let signal):
                        action = shutdown.state.withLock { $0.received(signal, now: elapsed.now) }
                        if case .requestStop = action, let end = shutdown.state.withLock({ $0.stopDeadline })
                        {
                            group.addTask {
                                // The stop's deadline: cancelled when the service returns in time.
                                if (try? await elapsed.sleep(until: end)) != nil {
                                    input.yield(.deadlinePassed)
                                }
                                return .deadline
                            }
                        }
                    case .deadlinePassed:
                        action = shutdown.state.withLock { $0.tick(now: elapsed.now) }
                    case .serviceEnded:
                        ended = true
                        action = .none
                    }
                    if ended { break }
                    perform(action, token: token, cancelService: { group.cancelAll() })
                }
                if !ended {
                    // The runner's task was cancelled: the graceful stop, and the cancellation.
                    token.request()
                }
                group.cancelAll()
                var outcome: S.Outcome?
                while let child = try await group.next() {
                    if case .service(let value) = child { outcome = value }
                }
                guard let outcome else { throw CancellationError() }
                return outcome
            }
        }
    }

    private func perform(_ action: ServiceShutdown.Action, token: StopToken, cancelService: () -> Void) {
        switch action {
        case .none:
            break
        case .requestStop(let signal):
            // The stop first, whatever writing the log line costs.
            token.request(signal)
            logger?.info("\(signal): stopping")
        case .forceExit(let reason):
            switch forcedEnd {
            case .exitProcess(let beforeExit):
                logger?.warning(reason)
                beforeExit()
                exitProcess(1)
            case .cancelService:
                logger?.warning(reason)
                cancelService()
            }
        }
    }
}

/// What the runner's loop waits for.
private enum RunnerInput: Sendable {
    case signal(ProcessSignal)
    case deadlinePassed
    case serviceEnded
}

/// What a task of the service's group ends with.
private enum RunnerChild<Outcome: Sendable>: Sendable {
    case service(Outcome)
    case deadline
}

/// The shutdown's state, shared by the runner's loop and the service's task.
private final class SharedShutdown: Sendable {
    let state: Mutex<ServiceShutdown>

    init(_ shutdown: ServiceShutdown) { state = Mutex(shutdown) }
}
