import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// The tests' way to block or compute at length without holding a thread of the cooperative
/// pool: ``offCooperativePool(_:_:)`` gives back what its body did, its body is still the
/// test's (its expectations are the test's), bodies that block all at once each have a thread,
/// and a body that computes yields the cores to the pool's threads.
struct OffCooperativePoolTests {
    private struct Refusal: Error, Equatable {
        let reason: String
    }

    /// A meeting point for `expected` threads: each blocks until all have arrived, or `timeout`.
    private final class Barrier: @unchecked Sendable {
        private let condition = NSCondition()
        private var arrived = 0
        private let expected: Int

        init(expected: Int) { self.expected = expected }

        /// Whether every thread arrived before `timeout` (blocks the calling thread meanwhile).
        func arriveAndWait(timeout: TimeInterval) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            arrived += 1
            condition.broadcast()
            let deadline = Date(timeIntervalSinceNow: timeout)
            while arrived < expected {
                if !condition.wait(until: deadline) { return arrived >= expected }
            }
            return true
        }
    }

    @Test func itReturnsWhatTheBodyReturns() async {
        let value = await offCooperativePool { (1...10).reduce(0, +) }
        #expect(value == 55)
    }

    @Test func itThrowsWhatTheBodyThrowsWithItsType() async {
        do {
            _ = try await offCooperativePool { () throws(Refusal) -> Int in throw Refusal(reason: "no") }
            Issue.record("no error thrown")
        } catch {
            #expect(error == Refusal(reason: "no"))
        }
    }

    /// The body runs in the test's task: Swift Testing's current test is there, so an
    /// expectation that fails in the body fails this test.
    @Test func theBodyIsInTheTestsTask() async {
        let name = await offCooperativePool { Test.current?.name }
        #expect(name == Test.current?.name)
        #expect(name != nil)
    }

    /// A body that computes runs 10 nice levels below the test's thread (at most 19), one that
    /// waits at the same priority: the nice value is per thread on Linux (`PRIO_PROCESS` with 0
    /// is the calling thread).
    @Test func aBodyThatComputesHasALowerPriorityThanOneThatWaits() async {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let process = getpriority(which, 0)
        #expect(await offCooperativePool(.computing) { getpriority(which, 0) } == min(process + 10, 19))
        #expect(await offCooperativePool(.waiting) { getpriority(which, 0) } == process)
        #expect(getpriority(which, 0) == process, "the test's own thread is left as it was")
    }

    /// More bodies than the pool has threads block until all of them run at once: on the pool
    /// (a thread per core) the first ones would wait for the others in vain and time out.
    @Test func bodiesThatBlockAtOnceEachHaveAThreadOfTheirOwn() async {
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let barrier = Barrier(expected: count)
        let met = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask { await offCooperativePool { barrier.arriveAndWait(timeout: 20) } }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(met == Array(repeating: true, count: count))
    }
}
