import Foundation
import Testing

/// `kinesia watch` following a real topology: broker, a worker with both sides, an ingest.
@Suite(.serialized)
struct WatchIntegrationTests {
    static let source = "sim:shoulderAbduction,side=both,seed=3"

    @Test func watchPrintsEveryEventAndEndsWithTheCountsAnalyzeFinds() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = directory.appendingPathComponent("bus").path
        let broker = try ConsumerTestProcess(["broker", "--bus", bus], in: directory, label: "broker")
        try await Task.sleep(for: .milliseconds(300))
        let worker = try ConsumerTestProcess(
            [
                "worker", "--bus", bus, "--name", "worker-sides", "--camera", "cam0",
                "--session", "left=shoulderAbduction:left", "--session", "right=shoulderAbduction:right",
            ],
            in: directory, label: "worker")
        let watch = try ConsumerTestProcess(
            ["watch", "--bus", bus, "--duration", "8"], in: directory, label: "watch")
        try await Task.sleep(for: .seconds(1))
        let ingest = try ConsumerTestProcess(
            ["ingest", "--bus", bus, "--camera", "cam0", "--source", Self.source, "--pace", "max"],
            in: directory, label: "ingest")
        let ingestStatus = await ingest.wait(timeout: .seconds(30))
        let status = await watch.wait(timeout: .seconds(30))
        await worker.stop()
        await broker.stop()

        #expect(ingestStatus == 0, "\(ingest.error)")
        #expect(status == 0, "\(watch.error)")
        let lines = watch.output.split(separator: "\n").map(String.init)
        for side in ["left", "right"] {
            let expected = try await ConsumerTestPaths.analyze(
                Self.source, exercise: "shoulderAbduction", side: side)
            // One plain line per event, as analyze prints them, prefixed with the session.
            let completed = lines.filter { $0.hasPrefix("cam0/\(side) ") && $0.contains("repCompleted") }
            #expect(completed.count == expected.clean, "\(lines)")
            let rejected = lines.filter { $0.hasPrefix("cam0/\(side) ") && $0.contains("repRejected") }
            #expect(rejected.count == expected.rejected)
            // The final view's counts come from the last snapshot.
            #expect(
                lines.contains { $0.contains("reps \(expected.clean) clean, \(expected.rejected) rejected") },
                "\(lines)")
        }
        #expect(lines.contains { $0.hasPrefix("kinesia watch \(bus) | 2 sessions | ") })
        #expect(lines.contains { $0.hasPrefix("worker-sides ") && $0.contains("poses ") })
        #expect(!watch.output.contains("\u{1B}["), "no terminal control sequences when not on a terminal")
    }

    @Test func watchWithIdleExitsByItselfOnASilentBus() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await ConsumerTestPaths.run(
            ["watch", "--bus", directory.path, "--idle", "1"], timeout: .seconds(20))
        #expect(run.status == 0)
        #expect(run.output.contains("waiting for messages on the bus..."))
    }
}
