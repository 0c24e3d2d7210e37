package import Glibc
package import KinesiaSystem

/// A process that a test starts (a `kinesia` command, a script, a system tool), its output going
/// to files, reaped by the test itself.
///
/// Every test of the package runs in one process, many at a time, so a child must take nothing
/// from that process but its arguments and environment: it is started by ``ProcessSpawn``, the
/// spawn `kinesia up` uses (no inherited descriptor, default signal dispositions and an empty
/// mask, a process group of its own), with standard input from a file (`/dev/null` by default)
/// and standard output and error to files (no pipe can fill up and block it).
///
/// Reaping is ``ChildProcess``'s, the package's one owner of a child: a thread of its own waits
/// for this pid only (never for the children of other tests), and ``send(_:)`` signals it only
/// while it has not been reaped, under the same lock, so a signal never reaches a reused pid. A
/// process still running when its `TestProcess` goes away is killed and reaped.
///
/// Not `Foundation.Process`: it does not reset the signal mask, and it runs a run loop on a
/// thread of its own to reap.
package final class TestProcess: Sendable {
    /// What went wrong when starting a process.
    package typealias SpawnError = ProcessSpawn.Failure

    /// The process id.
    package let pid: pid_t

    private let child: ChildProcess

    /// Starts `executable` with `arguments` (without `argv[0]`, which is the executable).
    ///
    /// - Parameters:
    ///   - executable: An absolute path.
    ///   - arguments: The arguments after `argv[0]`.
    ///   - environment: The complete environment.
    ///   - standardInput: The file read as standard input.
    ///   - standardOutput: The file standard output goes to (created or truncated).
    ///   - standardError: The file standard error goes to; the same path as `standardOutput`
    ///     interleaves both in one file.
    ///   - workingDirectory: The child's working directory (the test process's when `nil`).
    /// - Throws: ``SpawnError``.
    package init(
        executable: String, arguments: [String], environment: [String: String],
        standardInput: String = "/dev/null", standardOutput: String = "/dev/null",
        standardError: String = "/dev/null", workingDirectory: String? = nil
    ) throws(SpawnError) {
        var spawn = ProcessSpawn(
            executable: executable, arguments: [executable] + arguments,
            environment: environment.map { "\($0.key)=\($0.value)" })
        spawn.standardInput = standardInput
        spawn.standardOutput = .file(standardOutput)
        spawn.standardError = standardError == standardOutput ? .standardOutput : .file(standardError)
        spawn.workingDirectory = workingDirectory
        child = try ChildProcess(spawn, name: "kinesia-test-child")
        pid = child.pid ?? -1
    }

    deinit {
        if child.send(.kill, toGroup: false) { child.waitForExit() }
    }

    /// Whether it has not exited yet.
    package var isRunning: Bool { child.status == nil }

    /// The exit status once it has exited: the code, or 128 + N when signal N ended it.
    package var exitStatus: Int32? { child.status?.shellStatus }

    /// Sends `signal` to the process (not its group) while it has not been reaped.
    ///
    /// - Returns: Whether the signal was sent.
    @discardableResult
    package func send(_ signal: Int32) -> Bool {
        child.send(ProcessSignal(rawValue: signal), toGroup: false)
    }

    /// Waits until it exits, looking every 10 ms (no thread is blocked).
    ///
    /// - Returns: ``exitStatus``, or `nil` when it still runs after `timeout`.
    package func waitForExit(timeout: Duration) async -> Int32? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while isRunning {
            if clock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return exitStatus
    }

    /// Blocks the calling thread until it exits (for synchronous tests).
    ///
    /// - Returns: ``exitStatus``.
    package func waitForExit() -> Int32 {
        child.waitForExit()?.shellStatus ?? -1
    }

    /// SIGTERM, then SIGKILL when it still runs after `grace`.
    ///
    /// - Returns: The exit status (128 + 9 when it had to be killed).
    @discardableResult
    package func stop(grace: Duration = .seconds(5)) async -> Int32 {
        send(SIGTERM)
        if let status = await waitForExit(timeout: grace) { return status }
        send(SIGKILL)
        return waitForExit()
    }

    /// Runs `executable` to its end with standard output and error in one file, and returns
    /// its exit status and that output.
    ///
    /// - Throws: ``SpawnError``.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String],
        workingDirectory: String? = nil
    ) throws(SpawnError) -> (status: Int32, output: String) {
        var template = Array("/tmp/kinesia-run.XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw SpawnError(errno: .current, executable: executable) }
        close(fd)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let process = try TestProcess(
            executable: executable, arguments: arguments, environment: environment,
            standardOutput: path, standardError: path, workingDirectory: workingDirectory)
        let status = process.waitForExit()
        return (status, readFile(path))
    }

    /// The contents of a file as UTF-8 text (lossy), or "" when it cannot be read.
    package static func readFile(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
