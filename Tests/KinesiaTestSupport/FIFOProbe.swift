import Dispatch
import Foundation
import Glibc

/// Checks that a call on a FIFO returns without waiting for a writer, and frees it if it does
/// wait: a plain `open(2)` of a FIFO for reading blocks until a writer opens it.
///
/// ```swift
/// #expect(FIFOProbe.returnsPromptly(unblocking: fifo) { _ = try? BusKey.load(fifo) })
/// ```
package enum FIFOProbe {
    /// Runs `body` on its own thread and reports whether it returned within `limit`. If not,
    /// the FIFO at `fifo` is opened for reading and writing (which never blocks on Linux) and
    /// closed, which releases a reader or a writer blocked in `open(2)`, so that the thread ends
    /// and the test can finish, and fail.
    package static func returnsPromptly(
        unblocking fifo: String, within limit: Duration = .seconds(2), _ body: @escaping @Sendable () -> Void
    ) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        if done.wait(timeout: .now() + .seconds(Int(limit.components.seconds))) == .success { return true }
        let writer = open(fifo, O_RDWR | O_NONBLOCK)
        if writer >= 0 { close(writer) }
        _ = done.wait(timeout: .now() + 10)
        return false
    }
}
