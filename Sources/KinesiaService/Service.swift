/// A long-running part of a process: it runs until its work ends or until it is asked to stop
/// gracefully, and a ``ServiceRunner`` runs it under the process's signals.
///
/// Stopping has two steps. The graceful one is ``StopToken/request(_:)`` on the token given to
/// ``run(until:)``: the service stops its intake, drains what it holds, closes its sockets with
/// their linger, and returns. The forced one, for a service that has not returned by its
/// deadline or on a second Control-C, is the cancellation of the task running it (see
/// ``ServiceRunner/ForcedEnd``).
///
/// A loop over libzmq sockets blocks and must stay on the thread that made its sockets: it is
/// a ``BlockingService``, which runs it on a thread of its own. An asynchronous service (the
/// supervisor of `kinesia up`) conforms directly:
///
/// ```swift
/// extension Supervisor: Service {
///     public func run(until stop: StopToken) async -> Int32 {
///         stop.whenRequested { self.requestShutdown(signal: $0) }
///         return await run()
///     }
/// }
/// ```
public protocol Service: Sendable {
    /// What the service gives back when it ends (`Void` for most, an exit status, a result).
    associatedtype Outcome: Sendable

    /// Runs until the work ends or `stop` is requested and the service has wound down.
    ///
    /// - Parameter stop: The graceful stop's request (from SIGINT or SIGTERM).
    /// - Returns: The service's outcome.
    /// - Throws: What stopped the service early (a failure, a usage error: see
    ///   ``ServiceError``).
    func run(until stop: StopToken) async throws -> Outcome
}

/// A ``Service`` whose loop blocks (libzmq sockets, a terminal): the loop runs on a thread of its
/// own (``DedicatedThread``), which keeps its sockets on one thread and the cooperative pool
/// free, and polls its ``StopToken`` between waits of at most a fraction of a second.
///
/// A thread cannot be cancelled: its forced end is the end of the process
/// (``ServiceRunner/ForcedEnd/exitProcess(beforeExit:)``).
///
/// ```swift
/// let service = WorkerService(configuration, log: log)
/// try await ServiceRunner(logger: log).run(BlockingService { stop in try service.run(until: stop) })
/// ```
public struct BlockingService<Outcome: Sendable>: Service {
    /// The name of the loop's thread (seen in `top -H`, debuggers and crash reports).
    public let threadName: String
    private let loop: @Sendable (StopToken) throws -> Outcome

    /// The service of `loop`.
    /// - Parameters:
    ///   - threadName: The name of the loop's thread.
    ///   - loop: The loop; it checks the token between waits of at most a fraction of a second
    ///     and returns once it is requested.
    public init(threadName: String = "kinesia.bus", _ loop: @escaping @Sendable (StopToken) throws -> Outcome)
    {
        self.threadName = threadName
        self.loop = loop
    }

    /// Runs the loop on a new thread until it returns.
    /// - Parameter stop: Passed to the loop.
    /// - Returns: What the loop returns.
    /// - Throws: What the loop throws.
    public func run(until stop: StopToken) async throws -> Outcome {
        let loop = self.loop
        return try await DedicatedThread.run(named: threadName) { try loop(stop) }
    }
}
