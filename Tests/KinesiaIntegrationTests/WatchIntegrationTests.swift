import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// `kinesia watch` following a real topology: broker, a worker with both sides, an ingest.
@Suite(.serialized, .tags(.process))
struct WatchIntegrationTests {
    static let source = "sim:shoulderAbduction,side=both,seed=3"

    /// Ordered by readiness lines, not by sleeps: the broker serves, the worker hosts, the watch
    /// is connected (its subscriptions on their way) before the ingest sends a pose; the watch
    /// is stopped once its progress lines show the final counts of both sides.
    @Test func watchPrintsEveryEventAndEndsWithTheCountsAnalyzeFinds() async throws {
        var expected: [String: (cleanPeaks: [String], clean: Int, rejected: Int)] = [:]
        var expectedLines: [String: [String]] = [:]
        for side in ["left", "right"] {
            expected[side] = try await ConsumerTestPaths.analyze(
                Self.source, exercise: "shoulderAbduction", side: side)
            expectedLines[side] = try await ConsumerTestPaths.analyzeEventLines(
                Self.source, exercise: "shoulderAbduction", side: side)
        }
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = directory.appendingPathComponent("bus").path
        let broker = try KinesiaProcess(
            "broker", ["broker", "--bus", bus], directory: directory.path, logLevel: "info")
        #expect(await broker.waitForError(containing: "serving"), "\(broker.errorText)")
        let worker = try KinesiaProcess(
            "worker",
            [
                "worker", "--bus", bus, "--name", "worker-sides", "--camera", "cam0",
                "--session", "left=shoulderAbduction:left", "--session", "right=shoulderAbduction:right",
            ], directory: directory.path, logLevel: "info")
        let watch = try KinesiaProcess(
            "watch", ["watch", "--bus", bus, "--duration", "300"], directory: directory.path, logLevel: "info"
        )
        #expect(await worker.waitForError(containing: "hosting"), "\(worker.errorText)")
        #expect(await watch.waitForError(containing: "watching \(bus)\n"), "\(watch.errorText)")
        let ingest = try KinesiaProcess(
            "ingest", ["ingest", "--bus", bus, "--camera", "cam0", "--source", Self.source, "--pace", "max"],
            directory: directory.path, logLevel: "warning")
        let ingestStatus = await ingest.waitForExit(timeout: .seconds(60))
        // Progress lines (every 5 s): "cam0/left: value 12, best 95.0, 3 clean, 1 rejected, ...".
        let final = await waitUntil(timeout: .seconds(60)) {
            let output = watch.output
            return expected.allSatisfy { side, counts in
                output.contains("cam0/\(side): ")
                    && output.split(separator: "\n").contains {
                        $0.hasPrefix("cam0/\(side): ")
                            && $0.contains(", \(counts.clean) clean, \(counts.rejected) rejected,")
                    }
            }
        }
        #expect(final, "\(watch.output)")
        watch.signal(SIGTERM)
        let status = await watch.waitForExit(timeout: .seconds(30))
        await worker.stop()
        await broker.stop()

        #expect(ingestStatus == 0, "\(ingest.errorText)")
        #expect(status == 0, "\(watch.errorText)")
        let lines = watch.output.split(separator: "\n").map(String.init)
        for side in ["left", "right"] {
            let expected = try #require(expected[side])
            // One plain line per event, as analyze prints them, prefixed with the session
            // (padded to 12 characters, then two spaces): every line, in order.
            // (The final view's session header also starts with the session: it has no time.)
            let prefix = "cam0/\(side)".padding(toLength: 12, withPad: " ", startingAt: 0) + "  "
            let events = lines.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
                .filter { Double($0.prefix(8).trimmingCharacters(in: .whitespaces)) != nil }
            let analyzeLines = try #require(expectedLines[side])
            #expect(expected.clean > 0 && expected.rejected > 0, "a source with clean and rejected reps")
            #expect(events == analyzeLines, "\(lines)")
            #expect(events.filter { $0.contains(" repCompleted ") }.count == expected.clean)
            #expect(events.filter { $0.contains(" repRejected ") }.count == expected.rejected)
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
            ["watch", "--bus", directory.path, "--idle", "1"], timeout: .seconds(60))
        #expect(run.status == 0)
        #expect(run.output.contains("waiting for messages on the bus..."))
    }
}
