import Foundation
import KinesiaSystem

/// Runs a blocking body on a thread of its own and awaits its result: libzmq sockets block and
/// stay on the thread that made them, so a loop over them never runs on the cooperative pool.
///
/// ```swift
/// let state = try await DedicatedThread.run(named: "kinesia.demo.view") { try view.run(stop: stop) }
/// ```
public enum DedicatedThread {
    /// `body`'s result (or error), once it has returned on a new thread named `name`.
    public static func run<Result: Sendable, Failure: Error>(
        named name: String, _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Swift.Result<Result, Failure>, Never>) in
            Thread.named(name) {
                continuation.resume(returning: Swift.Result { () throws(Failure) -> Result in try body() })
            }.start()
        }
        return try outcome.get()
    }
}
