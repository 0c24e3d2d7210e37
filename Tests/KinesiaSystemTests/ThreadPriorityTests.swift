import Foundation
import Synchronization
import Testing

@testable import KinesiaSystem

/// A background thread runs at nice 10 and only it: the thread that made it, and the process's
/// other threads, keep their priority (Linux keeps a nice value per thread).
struct ThreadPriorityTests {
    /// The nice value a thread made at `priority` sees from inside.
    private func niceness(of priority: ThreadPriority) -> Int32? {
        let seen = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.named("kinesia.priority-test", priority: priority) {
            seen.withLock { $0 = ThreadPriority.currentNiceness }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        return seen.withLock { $0 }
    }

    @Test func aBackgroundThreadRunsAtNiceTenAndItsMakerKeepsItsOwn() throws {
        let before = try #require(ThreadPriority.currentNiceness)
        #expect(niceness(of: .background) == max(before, ThreadPriority.backgroundNiceness))
        #expect(ThreadPriority.currentNiceness == before)
        #expect(niceness(of: .inherited) == before)
    }

    @Test func aThreadThatRunsLowerAlreadyIsNotRaised() {
        let seen = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.named("kinesia.priority-test") {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 15)
            ThreadPriority.apply(.background)
            seen.withLock { $0 = ThreadPriority.currentNiceness }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == 15)
    }
}
