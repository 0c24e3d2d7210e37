public import Glibc
import Synchronization

/// A process that a test starts (a `kinesia` command, a script, a system tool), its output going
/// to files, reaped by the test itself.
///
/// Every test of the package runs in one process, many at a time, so a child must take nothing
/// from that process but its arguments and environment. `posix_spawn` with:
///
/// - **no inherited descriptor**: standard input from a file (`/dev/null` by default), standard
///   output and error to files, everything above 2 closed (`posix_spawn_file_actions_addclosefrom_np`).
///   Descriptors of the test process are rarely close-on-exec (`Foundation.Pipe`, `FileHandle`
///   and run-loop descriptors are not), so a child spawned while another test holds the write
///   end of a pipe would keep that pipe open, and the other test's read to the end would wait
///   for the child to exit; the runner's own output pipe leaked the same way;
/// - **default signal dispositions and an empty mask** (`POSIX_SPAWN_SETSIGDEF`,
///   `POSIX_SPAWN_SETSIGMASK`): the spawning thread is one of libdispatch's workers, which block
///   nearly every signal, and a child inherits that mask, so without this a shell child would
///   not stop on SIGTERM;
/// - **a process group of its own**, so that a signal for the test runner's group (Control-C)
///   reaches the runner, which then stops its children itself.
///
/// Reaping: ``isRunning``, ``waitForExit(timeout:)`` and ``waitForExit()`` wait for this pid
/// only (never for the children of other tests), and ``send(_:)`` signals it only while it has
/// not been reaped, under the same lock, so a signal never reaches a reused pid. A process still
/// running when its `TestProcess` goes away is killed and reaped.
///
/// Not `Foundation.Process`: it does not reset the signal mask, and it runs a run loop on a
/// thread of its own to reap.
public final class TestProcess: Sendable {
    /// What went wrong when starting a process.
    public struct SpawnError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The `errno` value `posix_spawn` returned.
        public var code: Int32
        /// The executable.
        public var executable: String

        public var description: String {
            "cannot run \(executable): \(String(cString: strerror(code)))"
        }
    }

    /// The process id.
    public let pid: pid_t

    /// The exit status once reaped: the code, or 128 + N when signal N ended it.
    private let reaped = Mutex<Int32?>(nil)

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
    public init(
        executable: String, arguments: [String], environment: [String: String],
        standardInput: String = "/dev/null", standardOutput: String = "/dev/null",
        standardError: String = "/dev/null", workingDirectory: String? = nil
    ) throws(SpawnError) {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let create = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, create, 0o600)
        if standardError == standardOutput {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, standardError, create, 0o600)
        }
        guard let closeFrom = Self.closeFromAction else {
            throw SpawnError(code: ENOSYS, executable: executable)
        }
        _ = closeFrom(&actions, 3)
        if let workingDirectory {
            guard let changeDirectory = Self.changeDirectoryAction else {
                throw SpawnError(code: ENOSYS, executable: executable)
            }
            _ = changeDirectory(&actions, workingDirectory)
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(code: result, executable: executable) }
        self.pid = pid
    }

    deinit {
        reaped.withLock { status in
            guard status == nil else { return }
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            status = Self.decode(raw)
        }
    }

    /// Whether it has not exited yet (reaps it when it has).
    public var isRunning: Bool {
        reaped.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
            status = Self.decode(raw)
            return false
        }
    }

    /// The exit status once it has exited: the code, or 128 + N when signal N ended it.
    public var exitStatus: Int32? {
        isRunning ? nil : reaped.withLock { $0 }
    }

    /// Sends `signal` while it has not been reaped.
    ///
    /// - Returns: Whether the signal was sent.
    @discardableResult
    public func send(_ signal: Int32) -> Bool {
        reaped.withLock { status in
            status == nil && kill(pid, signal) == 0
        }
    }

    /// Waits until it exits, polling every 10 ms (no thread is blocked).
    ///
    /// - Returns: ``exitStatus``, or `nil` when it still runs after `timeout`.
    public func waitForExit(timeout: Duration) async -> Int32? {
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
    public func waitForExit() -> Int32 {
        // Wait without reaping, so that `send` never signals a reaped (reusable) pid.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        while isRunning {}  // reaps: it has exited
        return exitStatus ?? -1
    }

    /// SIGTERM, then SIGKILL when it still runs after `grace`.
    ///
    /// - Returns: The exit status (128 + 9 when it had to be killed).
    @discardableResult
    public func stop(grace: Duration = .seconds(5)) async -> Int32 {
        send(SIGTERM)
        if let status = await waitForExit(timeout: grace) { return status }
        send(SIGKILL)
        return waitForExit()
    }

    /// Runs `executable` to its end with standard output and error in one file, and returns
    /// its exit status and that output.
    ///
    /// - Throws: ``SpawnError``.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String],
        workingDirectory: String? = nil
    ) throws(SpawnError) -> (status: Int32, output: String) {
        var template = Array("/tmp/kinesia-run.XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw SpawnError(code: errno, executable: executable) }
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
    public static func readFile(_ path: String) -> String {
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

    private static func decode(_ raw: Int32) -> Int32 {
        raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    private typealias CloseFromFunction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    private typealias ChangeDirectoryFunction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; a GNU declaration
    /// that Swift does not see).
    private static let closeFromAction: CloseFromFunction? = {
        guard
            let symbol = dlsym(
                UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: CloseFromFunction.self)
    }()

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later).
    private static let changeDirectoryAction: ChangeDirectoryFunction? = {
        guard
            let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        else { return nil }
        return unsafeBitCast(symbol, to: ChangeDirectoryFunction.self)
    }()
}
