import Foundation
import Testing

/// `kinesia worker`'s options, refused before anything starts.
struct WorkerCommandTests {
    /// A pool worker with a relative state directory would start, then fail every session it
    /// is given: it is refused at once, as the coordinator and a worker of `--session` flags are.
    @Test(.timeLimit(.minutes(3)))
    func aPoolWorkerWithARelativeStateDirectoryIsAUsageError() async throws {
        let bus = NSTemporaryDirectory() + "kinesia-worker-options-\(UUID().uuidString)"
        try FileManager.default.createDirectory(
            atPath: bus, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: bus) }
        let run = await CommandRun.run(["worker", "--pool", "default", "--state", "state", "--bus", bus])
        #expect(run.status == 64, "\(run)")
        #expect(run.error.contains("--state must be an absolute path, got \"state\""), "\(run.error)")
    }
}
