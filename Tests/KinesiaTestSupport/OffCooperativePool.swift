/// Runs `body` on a thread of its own and returns (or throws) what it did, without holding a
/// thread of Swift's cooperative pool while it runs.
///
/// Every test of the package runs in one process, many at a time, on the cooperative pool: one
/// thread per core, two on a CI machine. A test that blocks (a wait for a child process, a
/// semaphore, `Thread.sleep`, a blocking libzmq receive) or computes for seconds on one of
/// those threads holds it for as long, and every other test's next step (a `@MainActor`
/// session's reading, a time limit's timer, a trivial test's start) waits behind it: in CI
/// runs such tests held both threads for a hundred seconds and the `MotionSession` tests ran
/// past their one-minute limit. A test awaits here instead: its pool thread goes back to the
/// pool, and the system's scheduler shares the cores between `body`'s thread and the pool's.
///
/// `body` runs in the calling task (its preferred executor is a ``DedicatedThreadExecutor``),
/// so its task-local values are there: an `#expect` or an `Issue.record` in `body` is the
/// calling test's, as it would be without the helper.
///
/// ```swift
/// @Test func everySplitContinuesExactly() async throws {
///     try await offCooperativePool(.computing) { try expectSplitsContinueExactly(poses) }
/// }
/// ```
///
/// Work that computes (``OffPoolWork/computing``) runs at a lower priority than the pool's
/// threads: moved off the pool but given the cores first, a dozen such tests at once would take
/// them from the pool as surely as when they ran on it.
///
/// - Parameters:
///   - work: What `body` mostly does: waits (the default), or computes.
///   - body: The blocking or long work; it runs once, on a new thread.
/// - Returns: What `body` returned.
/// - Throws: What `body` threw.
package func offCooperativePool<Value, Failure: Error>(
    _ work: OffPoolWork = .waiting, _ body: () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let executor = DedicatedThreadExecutor(name: "kinesia-test-off-pool", niceness: work.niceness)
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor, isolation: nil) {
        () async throws(Failure) -> Value in
        try body()
    }
}
