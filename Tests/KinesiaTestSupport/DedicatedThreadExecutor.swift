import Foundation
import Glibc

/// A task executor that runs every job given to it on one thread of its own, until
/// ``finish()``: what ``offCooperativePool(_:)`` prefers for the work it moves off the pool.
///
/// The thread sleeps on a condition while no job is queued (no polling, no CPU), and ends once
/// ``finish()`` was called and the jobs queued before it have run. A positive `niceness` lowers
/// its scheduling priority (added to the thread's nice value, which Linux keeps per thread): the system then gives the CPU to
/// the other threads of the process (the cooperative pool's) first.
///
/// ```swift
/// let executor = DedicatedThreadExecutor(name: "kinesia-test-off-pool")
/// defer { executor.finish() }
/// let sum = await withTaskExecutorPreference(executor) { (1...10).reduce(0, +) }
/// ```
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The queued jobs and whether the thread should end, under the condition's lock.
    private var jobs: [UnownedJob] = []
    private var finishing = false
    private let changed = NSCondition()

    /// Starts the thread, named `name` (debugging only), its nice value raised by `niceness` (0:
    /// the process's).
    init(name: String, niceness: Int32 = 0) {
        let thread = Thread { [self] in
            // This thread's alone: Linux keeps a nice value per thread.
            if niceness != 0 { _ = nice(niceness) }
            runJobs()
        }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        changed.lock()
        jobs.append(job)
        changed.signal()
        changed.unlock()
    }

    /// Ends the thread once the jobs queued so far have run.
    func finish() {
        changed.lock()
        finishing = true
        changed.signal()
        changed.unlock()
    }

    private func runJobs() {
        while let job = nextJob() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// The next job, waiting for one; `nil` once finishing with none left.
    private func nextJob() -> UnownedJob? {
        changed.lock()
        defer { changed.unlock() }
        while jobs.isEmpty {
            if finishing { return nil }
            changed.wait()
        }
        return jobs.removeFirst()
    }
}
