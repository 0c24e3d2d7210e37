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
