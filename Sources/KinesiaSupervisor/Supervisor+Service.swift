public import KinesiaService

extension Supervisor: Service {
    /// Runs as ``run()`` does, shutting down gracefully when `stop` is requested (with the
    /// request's signal, for the report); run by a ``ServiceRunner`` with
    /// ``ServiceRunner/ForcedEnd/cancelService``, the cancellation of a second SIGINT is the
    /// second request, which kills every child at once. A repeated SIGTERM or SIGHUP is not a
    /// second request (the kernel sends the parent-death signal once per exiting thread of a
    /// dead parent).
    ///
    /// ```swift
    /// let runner = ServiceRunner(logger: nil, stopDeadline: nil, forcedEnd: .cancelService)
    /// let status = try await runner.run(supervisor, signals: SignalStream([.interrupt, .terminate]))
    /// ```
    ///
    /// - Parameter stop: The graceful shutdown's request.
    /// - Returns: As ``run()``.
    public func run(until stop: StopToken) async -> Int32 {
        stop.whenRequested { signal in self.requestShutdown(signal: signal) }
        return await run()
    }
}
