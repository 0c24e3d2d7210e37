import Foundation
import Glibc
import KinesiaTestSupport
import Synchronization
import Testing

/// `--journal-max-bytes` bounds a running process's state directory, as an operator sees it
/// with `du`: an ingest publishing as fast as it can and the worker journaling its sessions.
@Suite(.tags(.process), .serialized)
struct JournalRetentionTests {
    /// The limit given to both processes, and the segment size it gives (an eighth, at least
    /// 64 KiB).
    static let limit = 256 << 10
    static let segment = 64 << 10

    /// The names and sizes of the segments under `state/journal` now.
    private static func segments(_ state: String) -> [String: Int] {
        var found: [String: Int] = [:]
        let root = state + "/journal"
        let manager = FileManager.default
        for topic in (try? manager.contentsOfDirectory(atPath: root)) ?? [] {
            for stream in (try? manager.contentsOfDirectory(atPath: root + "/" + topic)) ?? [] {
                let path = root + "/" + topic + "/" + stream
                for name in (try? manager.contentsOfDirectory(atPath: path)) ?? []
                where name.hasSuffix(".journal") {
                    var info = stat()
                    guard lstat(path + "/" + name, &info) == 0 else { continue }
                    found[topic + "/" + stream + "/" + name] = Int(info.st_size)
                }
            }
        }
        return found
    }

    /// Before, retention ran at most every 10 s: an ingest at `--pace max` with a 256 KiB limit
    /// kept megabytes (hundreds of segments) between two scans.
    @Test func theStateDirectoriesStayWithinTheJournalLimitWhileTheProcessesRun() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let ingestState = topology.directory + "/ingest-state"
        let workerState = topology.directory + "/worker-state"
        _ = try await topology.startBroker()
        let worker = try await topology.startWorker(
            "worker",
            [
                "--camera", "cam0", "--session", "left=squat:left", "--state", workerState,
                "--journal-max-bytes", "256K",
            ])
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", "sim:squat,reps=400", "--pace", "max", "--state",
                ingestState, "--journal-max-bytes", "256K",
            ])
        // Sampled every 50 ms on a thread of its own: on the cooperative pool, the parallel suite's
        // blocking tests left a sampling task unscheduled for seconds (a fresh-clone CI run saw
        // 16 of the ingest's hundreds of segments).
        let samples = Mutex(
            (peak: ["ingest": 0, "worker": 0], seen: ["ingest": Set<String>(), "worker": Set<String>()]))
        let sampling = Atomic<Bool>(true)
        let sampled = DispatchSemaphore(value: 0)
        let states = [("ingest", ingestState), ("worker", workerState)]
        Thread {
            while sampling.load(ordering: .acquiring) {
                for (name, state) in states {
                    let now = Self.segments(state)
                    samples.withLock {
                        $0.peak[name] = max($0.peak[name]!, now.values.reduce(0, +))
                        $0.seen[name]!.formUnion(now.keys)
                    }
                }
                usleep(50_000)
            }
            sampled.signal()
        }.start()
        // About 8 s on a quiet machine; the parallel test suite on 2 cores can take several times that.
        let exit = await ingest.waitForExit(timeout: .seconds(120))
        sampling.store(false, ordering: .releasing)
        sampled.wait()
        let (peak, seen) = samples.withLock { ($0.peak, $0.seen) }
        #expect(exit == 0, "\(ingest.diagnostics)")
        // Enough was written for retention to matter: several times the limit.
        #expect(seen["ingest"]!.count * Self.segment > 4 * Self.limit, "\(ingest.diagnostics)")
        #expect(seen["worker"]!.count * Self.segment > 2 * Self.limit, "\(worker.diagnostics)")
        // The limit, a segment closed since the last scan and those being written (one per
        // stream: one for the ingest, two for the worker's session).
        #expect(peak["ingest"]! <= Self.limit + 2 * Self.segment, "\(seen["ingest"]!.count) segments seen")
        #expect(peak["worker"]! <= Self.limit + 3 * Self.segment, "\(seen["worker"]!.count) segments seen")
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0, "\(worker.diagnostics)")
    }
}
