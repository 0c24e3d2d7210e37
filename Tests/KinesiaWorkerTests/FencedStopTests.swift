import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaControl
import KinesiaMotion
import KinesiaPublishJournal
import KinesiaService
import KinesiaSystem
import Testing

@testable import KinesiaWorker

/// A pool worker paused past its lease asks its sessions to stop as it comes back, maybe before
/// their own threads looked at the lease. Such a stop is a lapse, not a graceful stop: the
/// session ends no run and marks nothing in the state directory, which another holder may be
/// journaling the session in by then, and the stream stays the one the next holder resumes.
/// (Taken gracefully, a resumed run's stop flushed a journal fenced away, and the failure marked
/// the stream ended: the taker's next start began a new stream mid-run, and consumers lost the
/// run's last events.)
@Suite(.serialized) struct FencedStopTests {
    @Test func aStopAskedForAfterTheLeaseLapsedEndsNoRunAndKeepsTheStream() throws {
        var template = Array("/tmp/kinesia-fenced-stop.XXXXXX".utf8CString)
        #expect(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil })
        let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(
            atPath: directory + "/bus", withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        let bus = try BusAddress(parsing: directory + "/bus")
        var journal = JournalOptions()
        journal.state = directory + "/state"
        let plan = try SessionPlan(
            key: SessionKey(parsing: "cam0/left"), exerciseFile: SessionPlan.catalogExercise("squat"),
            analysis: .left, run: 1)
        let session = WorkerSession(
            camera: "cam0", name: "left", exercise: plan.exercise, analysis: .side(.left), run: 1)
        let manual = ManualClock()
        let text = CapturedText()

        /// One start of the session under `epoch`, stopped as soon as it runs (or at once), with
        /// the run ending as `ending` says.
        func start(
            epoch: UInt64, leaseHolds: Bool, stopAtOnce: Bool, ending: RunRecord.RunEnd.Reason?
        ) -> String {
            let fence = SessionFence(clock: ElapsedClock(manual))
            fence.hold(until: leaseHolds ? .seconds(3600) : nil)
            let service = WorkerService(
                WorkerService.Configuration(
                    process: BusProcessIdentity(bus: bus, name: "w1-cam0.left"), sessions: [session],
                    journal: journal, environment: [:], plans: [plan], fencing: (fence, epoch)),
                log: Logger(label: "worker", sink: text))
            let stop = StopToken()
            if stopAtOnce { stop.request() }
            let before = text.text.count
            do {
                try service.run(until: stop, ready: { stop.request() }, runEnd: { ending })
            } catch {
                text.write("run: \(error)\n")
            }
            return String(text.text.dropFirst(before))
        }

        let first = start(epoch: 5, leaseHolds: true, stopAtOnce: false, ending: nil)
        let stream = try #require(
            first.firstMatch(of: /session cam0\/left: new stream ([0-9a-f]+)/)?.1, "\(first)")

        // The lease lapsed; the stop, asked for before the session looked, says the run ended.
        let lapsed = start(epoch: 5, leaseHolds: false, stopAtOnce: true, ending: .stopped)
        #expect(!lapsed.contains("ended"), "\(lapsed)")
        #expect(!lapsed.contains("will not be resumed"), "\(lapsed)")

        let next = start(epoch: 6, leaseHolds: true, stopAtOnce: false, ending: nil)
        #expect(next.contains("session cam0/left: resuming stream \(stream)"), "\(next)")
    }
}
