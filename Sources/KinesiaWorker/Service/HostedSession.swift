import Foundation
import KinesiaBus
import KinesiaControl
import KinesiaService
import KinesiaSystem
import Synchronization

/// One session a pool worker hosts: its plan, and the ``WorkerService`` that analyses it on a
/// thread of its own, with its own stop token, so that starting or stopping one session never
/// pauses another.
final class HostedSession: Sendable {
    /// What it runs.
    let plan: SessionPlan
    private let token = StopToken()
    private let finished = DispatchSemaphore(value: 0)
    private let failure = Mutex<String?>(nil)
    private let ended = Atomic<Bool>(false)
    private let live = Atomic<Bool>(false)
    private let ending = Mutex<RunRecord.RunEnd.Reason?>(nil)
    private let latestCounts = Mutex<(repCount: Int, rejectedCount: Int)?>(nil)
    private let latestResume = Mutex<(resume: RunResume?, version: UInt64)>((nil, 0))
    /// Whether the coordinator has its run's latest resume.
    let resumeKept = ResumeAcknowledgement()

    /// Starts `service` on a new thread, its sockets in `context` (the pool worker's).
    init(plan: SessionPlan, service: WorkerService, context: ZMQContext) {
        self.plan = plan
        // The thread holds the session until its service returns.
        let thread = Thread.named("\(plan.key)") { [self] in
            do {
                try service.run(
                    until: token,
                    ready: { live.store(true, ordering: .releasing) },
                    progress: { counts in latestCounts.withLock { $0 = counts[plan.key.description] } },
                    resumed: { resumes in
                        // The resume and its version together: a report never carries an older
                        // resume under a newer version (its grant would release a wait too soon).
                        let version = resumeKept.told()
                        latestResume.withLock { $0 = (resumes[plan.key.description], version) }
                    },
                    resumeKept: { bound in resumeKept.wait(within: bound) },
                    runEnd: { ending.withLock { $0 } },
                    context: context)
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            ended.store(true, ordering: .releasing)
            finished.signal()
        }
        thread.start()
    }

    /// Whether its service is analysing: subscribed, its state restored, and not returned.
    var isLive: Bool { live.load(ordering: .acquiring) && !hasEnded }

    /// Its clean and rejected reps, as its service last told (`nil`: not yet, or analytics).
    var counts: (repCount: Int, rejectedCount: Int)? { latestCounts.withLock { $0 } }

    /// Where its run goes on, as its service last told (`nil`: not yet, no journal, or too many
    /// holes to tell), and how many times it told (a report goes out at once when it changes).
    var resume: (resume: RunResume?, version: UInt64) { latestResume.withLock { $0 } }

    /// Whether its service has returned (stopped, or failed).
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// Why its service failed (`nil`: it did not).
    var failureDescription: String? { failure.withLock { $0 } }

    /// Asks it to stop: it finishes the poses it has (at most half a second) and returns; its
    /// run ends for `reason` (a `runEnded` is announced), or goes on elsewhere when `nil` (the
    /// worker only stops).
    func requestStop(endingRun reason: RunRecord.RunEnd.Reason? = nil) {
        ending.withLock { $0 = reason }
        token.request()
    }

    /// Makes a stop already asked for without ending the run end it for `reason` (unless a
    /// reason was given): its service reads the reason as it returns.
    func upgradeStop(endingRun reason: RunRecord.RunEnd.Reason) {
        ending.withLock { if $0 == nil { $0 = reason } }
    }

    /// Waits at most `timeout` for it to return.
    ///
    /// - Returns: Whether it returned.
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        if hasEnded { return true }
        let result = finished.wait(timeout: .now() + .milliseconds(Int(timeout.components.seconds * 1000)))
        if result == .success { finished.signal() }
        return result == .success || hasEnded
    }
}
