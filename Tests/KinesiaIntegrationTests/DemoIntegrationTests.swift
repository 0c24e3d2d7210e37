import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// `kinesia demo` as a newcomer runs it: real broker, ingest and worker processes.
@Suite(.serialized, .tags(.process))
struct DemoIntegrationTests {
    static let source = "sim:shoulderAbduction,side=both,seed=7"

    /// The lines of one session's summary block (`cam0/left (...)` up to the next block).
    func block(_ session: String, in output: String) -> [String] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(session + " (") }) else { return [] }
        return Array(lines[start...].prefix { $0 == lines[start] || $0.hasPrefix("  ") })
    }

    func value(_ label: String, in block: [String]) -> String? {
        block.first { $0.hasPrefix("  " + label) }.map {
            $0.dropFirst(2 + label.count).trimmingCharacters(in: .whitespaces)
        }
    }

    @Test func aShortDemoSummarisesAtLeastOneCleanRepPerSideAndLeavesNoProcessBehind() async throws {
        let run = try await ConsumerTestPaths.run(["demo", "--seconds", "10"], timeout: .seconds(60))
        #expect(run.status == 0, "demo failed:\n\(run.output)\n\(run.error)")
        #expect(run.output.contains("demo: stopped every process; exit status 0"))
        #expect(run.output.contains("Summary of shoulderAbduction (seed 7):"))

        for side in ["left", "right"] {
            let summary = block("cam0/\(side)", in: run.output)
            #expect(summary.first == "cam0/\(side) (shoulderAbduction, \(side) side)", "\(run.output)")
            // "clean reps      1   peaks 132.4"
            let clean = try #require(value("clean reps", in: summary), "\(run.output)")
            let count = Int(clean.prefix { $0.isNumber }) ?? 0
            #expect(count >= 1, "no clean rep on the \(side): \(summary)")
            // The very reps `kinesia analyze` finds in the same simulated poses, in order.
            let expected = try await ConsumerTestPaths.analyze(
                Self.source, exercise: "shoulderAbduction", side: side)
            let peaks =
                clean.components(separatedBy: "peaks ").dropFirst().first?
                .components(separatedBy: ", ") ?? []
            #expect(!peaks.isEmpty)
            #expect(Array(expected.cleanPeaks.prefix(peaks.count)) == peaks)
            #expect(value("best", in: summary)?.hasSuffix("°") == true)
            let events = try #require(value("events", in: summary))
            #expect(events.contains("repCompleted"))
        }

        // Every child the supervisor started is gone.
        let pids = run.output.split(separator: "\n").compactMap { line -> Int32? in
            guard line.hasPrefix("demo: started "), let range = line.range(of: "(pid ") else { return nil }
            return Int32(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(pids.count == 4, "\(run.output)")
        for pid in pids { #expect(!ConsumerTestPaths.isAlive(pid), "pid \(pid) outlived the demo") }
        // The private bus directory is removed.
        let bus = run.output.split(separator: "\n").first { $0.hasPrefix("demo: ") && $0.contains(", bus ") }
        let directory = try #require(bus?.components(separatedBy: ", bus ").last)
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func sigintStopsTheDemoGracefullyWithASummaryAndNoProcessLeft() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let demo = try KinesiaProcess(
            "demo", ["demo", "--seconds", "60"], directory: directory.path, logLevel: "warning")
        // Wait until the ingest runs, then interrupt as Control-C would.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while !demo.output.contains("started ingest-cam0"), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(1))
        demo.signal(SIGINT)
        let status = await demo.waitForExit(timeout: .seconds(30))
        let output = demo.output
        #expect(status == 0, "\(output)\n\(demo.errorText)")
        #expect(output.contains("demo: shutting down (SIGINT)"))
        #expect(output.contains("stopped early by SIGINT"))
        let pids = output.split(separator: "\n").compactMap { line -> Int32? in
            guard line.hasPrefix("demo: started "), let range = line.range(of: "(pid ") else { return nil }
            return Int32(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(pids.count == 4)
        for pid in pids { #expect(!ConsumerTestPaths.isAlive(pid), "pid \(pid) outlived the demo") }
    }

    @Test func badOptionsAreUsageErrors() async throws {
        let run = try await ConsumerTestPaths.run(["demo", "--seconds", "0"])
        #expect(run.status == 64)
        #expect(run.error.contains("--seconds"))
        let unknown = try await ConsumerTestPaths.run(["demo", "--exercise", "juggling"])
        #expect(unknown.status == 64)
    }
}
