import Foundation
import KinesiaTestSupport

/// Runs what blocks (a process run to its end, a browser session) on a thread of its own, so
/// that the tests' cooperative threads (two on a 2-core machine) stay free for the other tests
/// running at the same time.
enum Offload {
    /// ``TestProcess/run(_:_:environment:workingDirectory:)`` on a thread of its own.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) async throws
        -> (
            status: Int32, output: String
        )
    {
        try await value { try TestProcess.run(executable, arguments, environment: environment) }
    }

    /// What `body` returns, computed on a thread of its own (a wait on sockets).
    static func value<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// Asks `condition` every 100 ms until it holds or `timeout` passes (it may await: a process,
/// a request): ``waitUntil(timeout:isolation:_:)`` for conditions that are not instant.
///
/// - Returns: Whether `condition` held before `timeout`.
func eventually(timeout: Duration, _ condition: () async -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if await condition() { return true }
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(100))
    }
}
