import Foundation
import Glibc

/// A running `kinesia` process (the one built with the tests, ``PackagePaths/kinesia()``) whose
/// standard output and error go to files in the test's directory (no pipe can fill up and
/// block it), started as a ``TestProcess``: no descriptor, signal mask or ignored signal of the
/// test process reaches it. A process still running when the value goes away is killed.
package final class KinesiaProcess: Sendable {
    /// The name of its output files and in failure messages.
    package let name: String
    /// The arguments after `kinesia`.
    package let arguments: [String]
    /// The process.
    package let process: TestProcess
    /// Its standard output.
    package let outputPath: String
    /// Its standard error.
    package let errorPath: String

    /// Starts `kinesia ARGUMENTS` with its outputs in `directory/NAME.out` and `NAME.err`.
    ///
    /// - Parameters:
    ///   - standardInput: The file read as standard input.
    ///   - logLevel: `KINESIA_LOG_LEVEL`; "info" keeps the readiness lines (`serving`,
    ///     `watching`, `hosting`).
    ///   - launcher: A command that runs `kinesia` for the test, `kinesia`'s path and arguments
    ///     after its own (`ip netns exec NS`: ``NamespaceNetwork/launcher(for:)``); it must exec
    ///     `kinesia` in its own process, so that signals to ``pid`` reach it.
    /// - Throws: ``PackagePaths/MissingExecutable`` (saying what to build) or
    ///   ``TestProcess/SpawnError``.
    package init(
        _ name: String, _ arguments: [String], directory: String, standardInput: String = "/dev/null",
        logLevel: String = "info", launcher: [String] = [], environment extra: [String: String] = [:]
    ) throws {
        self.name = name
        self.arguments = arguments
        outputPath = directory + "/\(name).out"
        errorPath = directory + "/\(name).err"
        var environment = ProcessInfo.processInfo.environment
        environment["KINESIA_BUS"] = nil
        environment["KINESIA_PROCESS_NAME"] = nil
        environment["KINESIA_SUPERVISOR_PID"] = nil
        environment["KINESIA_LOG_LEVEL"] = logLevel
        // Journals and stream identities (the default state directory) stay in the test's
        // directory: shared by the processes of one test, gone with it.
        environment["XDG_STATE_HOME"] = directory + "/state"
        environment.merge(extra) { _, new in new }
        let kinesia = try PackagePaths.kinesia()
        process = try TestProcess(
            executable: launcher.first ?? kinesia,
            arguments: launcher.isEmpty ? arguments : launcher.dropFirst() + [kinesia] + arguments,
            environment: environment,
            standardInput: standardInput, standardOutput: outputPath, standardError: errorPath)
    }

    /// The process id.
    package var pid: Int32 { process.pid }
    /// Whether it has not exited yet (reaps it when it has).
    package var isRunning: Bool { process.isRunning }

    /// Everything written on standard output so far.
    package var output: String { TestProcess.readFile(outputPath) }
    /// Everything written on standard error so far.
    package var errorText: String { TestProcess.readFile(errorPath) }

    /// The lines of standard output so far.
    package var outputLines: [String] {
        output.split(separator: "\n").map(String.init)
    }

    /// Sends a signal while it has not been reaped.
    package func signal(_ number: Int32) {
        process.send(number)
    }

    /// Waits until the process exits; `nil` when it is still running after `timeout`.
    package func waitForExit(timeout: Duration = .seconds(60)) async -> Int32? {
        await process.waitForExit(timeout: timeout)
    }

    /// Waits until its standard error contains `text`.
    @discardableResult
    package func waitForError(containing text: String, timeout: Duration = .seconds(60)) async -> Bool {
        await waitUntil(timeout: timeout) { self.errorText.contains(text) }
    }

    /// Waits until its standard output has at least `count` lines.
    @discardableResult
    package func waitForOutputLines(_ count: Int, timeout: Duration = .seconds(60)) async -> Bool {
        await waitUntil(timeout: timeout) { self.outputLines.count >= count }
    }

    /// SIGTERM, then SIGKILL if it is still there after `grace`; returns the exit status.
    @discardableResult
    package func stop(grace: Duration = .seconds(5)) async -> Int32? {
        await process.stop(grace: grace)
    }

    /// What a failed expectation should show.
    package var diagnostics: String {
        "\(name) (\(arguments.joined(separator: " "))):\n--- stderr ---\n\(errorText)"
    }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes: the one way a test waits
/// for something another task or process does, so that a regression fails within `timeout`
/// instead of hanging the run.
///
/// The condition runs on the caller's actor (a `@MainActor` test can read main-actor state), and
/// the sleeps between polls let that actor's other tasks run.
///
/// - Returns: Whether `condition` held before `timeout`.
package func waitUntil(
    timeout: Duration, isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while !condition() {
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
