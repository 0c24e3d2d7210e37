package import Testing

/// The error of type `Failure` that `body` throws, or `nil` when it throws none; an error of
/// another type is recorded as an issue (and gives `nil`).
///
/// ```swift
/// #expect(thrownError(CheckpointError.self) { try restore(checkpoint) }?.kind == .otherSide)
/// ```
package func thrownError<Failure: Error>(
    _ type: Failure.Type, sourceLocation: SourceLocation = #_sourceLocation, by body: () throws -> Void
) -> Failure? {
    do {
        try body()
        return nil
    } catch let error as Failure {
        return error
    } catch {
        Issue.record("not a \(Failure.self): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
