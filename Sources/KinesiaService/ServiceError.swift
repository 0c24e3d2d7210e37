/// An error a service throws to whoever runs it, which tells a mistake in what the service was
/// given (a usage error: `kinesia` exits 64) from a failure while it ran (exits 1).
///
/// ```swift
/// do {
///     try service.run(until: stop)
/// } catch let error as any ServiceError {
///     print(error.isUsageError ? "usage: \(error)" : "failed: \(error)")
/// }
/// ```
public protocol ServiceError: Error, CustomStringConvertible {
    /// Whether the error is the caller's mistake (a value given that cannot be used), not a
    /// failure of the service.
    var isUsageError: Bool { get }
}

extension ServiceError {
    /// What `body` returns; the error it throws becomes this service's, made by `transform`.
    ///
    /// A service's loop calls the typed APIs under it (sockets, journals, databases) and says
    /// what each failure means for its user:
    ///
    /// ```swift
    /// let health = try IngestServiceError.catching(IngestServiceError.processName) { () throws(TopicError) in
    ///     try identity.healthPublisher(role: "ingest")
    /// }
    /// ```
    ///
    /// The closure spells its error type: Swift infers `any Error` for a closure that does not.
    ///
    /// - Parameters:
    ///   - transform: Makes this service's error of the one `body` threw (an enum case that
    ///     carries it).
    ///   - body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: `transform(error)` when `body` throws `error`.
    @inlinable
    public static func catching<Value: ~Copyable, Failure: Error>(
        _ transform: (Failure) -> Self, _ body: () throws(Failure) -> Value
    ) throws(Self) -> Value {
        do {
            return try body()
        } catch {
            throw transform(error)
        }
    }
}
