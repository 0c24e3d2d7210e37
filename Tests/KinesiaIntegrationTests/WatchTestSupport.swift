import Foundation
import Glibc
import KinesiaMotion
import KinesiaTestSupport
import Testing

/// Paths and runs shared by the demo, status and watch tests.
enum ConsumerTestPaths {
    /// A new private directory with a short path (IPC socket paths are limited to 107 bytes).
    static func temporaryDirectory() throws -> URL {
        var template = Array("/tmp/kct.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw POSIXError(.EIO) }
        return URL(
            fileURLWithPath: String(
                decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Runs `kinesia ARGUMENTS` to the end and returns its status and outputs.
    static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (
        status: Int32?, output: String, error: String
    ) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = try KinesiaProcess("run", arguments, directory: directory.path, logLevel: "warning")
        let status = await process.waitForExit(timeout: timeout)
        return (status, process.output, process.errorText)
    }

    /// The clean rep peaks (one decimal, as the summaries print them) and the counts that
    /// `kinesia analyze` finds in a simulated source for one side.
    static func analyze(_ source: String, exercise: String, side: String) async throws -> (
        cleanPeaks: [String], clean: Int, rejected: Int
    ) {
        let run = try await run([
            "analyze", source, "--exercise", exercise, "--side", side, "--format", "json",
        ])
        #expect(run.status == 0, "analyze failed: \(run.error)")
        var peaks: [String] = []
        var clean = 0
        var rejected = 0
        for line in run.output.split(separator: "\n") {
            switch try MotionJSON.decode(line) {
            case .event(_, .repCompleted(let rep)): peaks.append(String(format: "%.1f", rep.peak))
            case .summary(let summary):
                clean = summary.repCount
                rejected = summary.rejectedCount
            default: break
            }
        }
        return (peaks, clean, rejected)
    }

    /// The event lines that `kinesia analyze --format text` prints for one side of a source (its
    /// summary line left out), in order.
    static func analyzeEventLines(_ source: String, exercise: String, side: String) async throws -> [String] {
        let run = try await run(["analyze", source, "--exercise", exercise, "--side", side])
        #expect(run.status == 0, "analyze failed: \(run.error)")
        var lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.last?.hasPrefix("summary: ") == true, "\(lines)")
        lines.removeLast()
        return lines
    }

    /// Whether a process with this pid exists.
    static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}
