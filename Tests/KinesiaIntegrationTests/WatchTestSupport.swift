import Foundation
import Glibc
import KinesiaMotion
import KinesiaTestSupport
import Testing

/// A real `kinesia` process started by the demo, status and watch tests: its standard output
/// and error go to files, and it is stopped (SIGTERM, then SIGKILL) when the test is done.
/// Started as a ``TestProcess``: no descriptor, signal mask or ignored signal of the test
/// process reaches it.
final class ConsumerTestProcess: Sendable {
    let process: TestProcess
    let outputURL: URL
    let errorURL: URL
    let label: String

    var pid: pid_t { process.pid }

    /// Starts `kinesia ARGUMENTS`, writing its outputs into `directory`; `logLevel` "info" keeps
    /// the readiness lines (`serving`, `watching`, `hosting`).
    init(_ arguments: [String], in directory: URL, label: String, logLevel: String = "warning") throws {
        self.label = label
        outputURL = directory.appendingPathComponent("\(label).out")
        errorURL = directory.appendingPathComponent("\(label).err")
        var environment = ProcessInfo.processInfo.environment
        environment["KINESIA_LOG_LEVEL"] = logLevel
        environment["KINESIA_BUS"] = nil
        environment["KINESIA_PROCESS_NAME"] = nil
        environment["KINESIA_SUPERVISOR_PID"] = nil
        process = try TestProcess(
            executable: ConsumerTestPaths.kinesia.path, arguments: arguments, environment: environment,
            standardOutput: outputURL.path, standardError: errorURL.path)
    }

    /// Everything written on standard output so far.
    var output: String { TestProcess.readFile(outputURL.path) }
    /// Everything written on standard error so far.
    var error: String { TestProcess.readFile(errorURL.path) }

    /// Whether the process has not exited yet (reaps it when it has).
    var isRunning: Bool { process.isRunning }

    /// Waits for the exit, at most `timeout`; kills the process when it takes longer.
    /// - Returns: The exit status (128 + N for signal N), or `nil` when it had to be killed.
    func wait(timeout: Duration) async -> Int32? {
        if let status = await process.waitForExit(timeout: timeout) { return status }
        process.send(SIGKILL)
        _ = process.waitForExit()
        return nil
    }

    /// Sends `signal` (SIGTERM by default) when the process still runs.
    func send(_ signal: Int32 = SIGTERM) {
        process.send(signal)
    }

    /// Waits until standard error contains `text`, at most `timeout`.
    func waitForError(containing text: String, timeout: Duration = .seconds(30)) async -> Bool {
        await waitUntil(timeout: timeout) { self.error.contains(text) }
    }

    /// SIGTERM, then SIGKILL after 5 seconds.
    func stop() async {
        send(SIGTERM)
        _ = await wait(timeout: .seconds(5))
    }
}

/// Paths and runs shared by the demo, status and watch tests.
enum ConsumerTestPaths {
    /// The `kinesia` executable built next to the test bundle.
    static let kinesia: URL = {
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            packageRoot.appendingPathComponent(".build/debug"),
        ]
        for case let directory? in candidates {
            let url = directory.appendingPathComponent("kinesia")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return packageRoot.appendingPathComponent(".build/debug/kinesia")
    }()

    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
            url.deleteLastPathComponent()
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

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
        let process = try ConsumerTestProcess(arguments, in: directory, label: "run")
        let status = await process.wait(timeout: timeout)
        return (status, process.output, process.error)
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

    /// Whether a process with this pid exists.
    static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}
