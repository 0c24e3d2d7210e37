package import Glibc

/// How to start a process with `posix_spawn`, so that it takes nothing from the spawning
/// process but its arguments and environment; the one spawn of the package (``ChildProcess``
/// for `kinesia up`, `TestProcess` for the tests).
///
/// Every spawn gets:
///
/// - **Default signal dispositions and an empty mask** (`POSIX_SPAWN_SETSIGDEF`,
///   `POSIX_SPAWN_SETSIGMASK`): SIGTERM works in the child even when the parent ignores it,
///   and even when the spawning thread is one of libdispatch's workers, which block nearly
///   every signal (a mask survives `exec`).
/// - **A process group of its own** (`POSIX_SPAWN_SETPGROUP`): Control-C at the terminal
///   reaches only the parent, which then stops its children in its own order; and a stop
///   signal can go to the whole group (`kill(-pid, ...)`).
/// - **No inherited descriptor**: standard input from a file (`/dev/null` by default) and every
///   descriptor above 2 closed (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34 and
///   later, found at run time as Swift does not see the GNU declarations). Descriptors are
///   rarely close-on-exec (`Foundation.Pipe`, `FileHandle`...), and a leaked write end of a
///   pipe keeps its reader waiting for the child.
///
/// ```swift
/// let pid = try ProcessSpawn(
///     executable: "/bin/sh", arguments: ["sh", "-c", "exit 3"], environment: ["PATH=/bin"]
/// ).spawn()
/// ```
package struct ProcessSpawn: Hashable, Sendable {
    /// Where standard output or standard error goes.
    package enum Output: Hashable, Sendable {
        /// The parent's descriptor (a supervisor's log).
        case inherited
        /// A file, created or truncated (mode 0600).
        case file(String)
        /// The same place as standard output (standard error only).
        case standardOutput
        /// A descriptor of the parent (the write end of a pipe), duplicated onto the child's;
        /// the parent keeps its own and closes it after the spawn.
        case descriptor(Int32)
    }

    /// The executable: a path, or a name found on `PATH` when it has no `/`.
    package var executable: String
    /// The complete argument vector, `argv[0]` included.
    package var arguments: [String]
    /// The complete environment, as `NAME=value` strings.
    package var environment: [String]
    /// The file read as standard input.
    package var standardInput = "/dev/null"
    /// Where standard output goes.
    package var standardOutput = Output.inherited
    /// Where standard error goes.
    package var standardError = Output.inherited
    /// The child's working directory (the parent's when `nil`).
    package var workingDirectory: String? = nil

    /// Describes a spawn; see the properties for the defaults.
    package init(executable: String, arguments: [String], environment: [String]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// A failed spawn: what was being run, and why.
    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// What `posix_spawn` (or a file action) returned.
        package var errno: Errno
        /// The executable.
        package var executable: String

        /// A failure to run `executable`.
        package init(errno: Errno, executable: String) {
            self.errno = errno
            self.executable = executable
        }

        /// `cannot run /x: No such file or directory`.
        package var description: String {
            "cannot run \(executable): \(errno)"
        }
    }

    /// Starts the process.
    ///
    /// - Returns: Its pid; the caller reaps it (``ChildWait``).
    /// - Throws: ``Failure`` (the file actions run in the child, so a missing input file or an
    ///   unwritable output also fails here, as a spawn error).
    package func spawn() throws(Failure) -> pid_t {
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
        switch standardOutput {
        case .inherited, .standardOutput: break
        case .file(let path): posix_spawn_file_actions_addopen(&actions, 1, path, create, 0o600)
        case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
        }
        switch standardError {
        case .inherited: break
        case .file(let path): posix_spawn_file_actions_addopen(&actions, 2, path, create, 0o600)
        case .standardOutput: posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, 2)
        }
        guard let closeFrom = Self.closeFromAction else {
            throw Failure(errno: .notImplemented, executable: executable)
        }
        _ = closeFrom(&actions, 3)
        if let workingDirectory {
            guard let changeDirectory = Self.changeDirectoryAction else {
                throw Failure(errno: .notImplemented, executable: executable)
            }
            _ = changeDirectory(&actions, workingDirectory)
        }

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        do {
            try Errno.retryingReturnedErrorOnInterrupt {
                executable.contains("/")
                    ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
                    : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
            }
        } catch {
            throw Failure(errno: error, executable: executable)
        }
        return pid
    }

    private typealias CloseFromFunction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    private typealias ChangeDirectoryFunction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), or `nil`.
    private static let closeFromAction: CloseFromFunction? = {
        guard
            let symbol = dlsym(
                UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: CloseFromFunction.self)
    }()

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), or `nil`.
    private static let changeDirectoryAction: ChangeDirectoryFunction? = {
        guard
            let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        else { return nil }
        return unsafeBitCast(symbol, to: ChangeDirectoryFunction.self)
    }()
}

/// Waiting for and reaping one child by its pid (never any other child of the process, so the
/// children of other parts of the process, such as a test runner's, are left alone).
///
/// To never signal a reaped (and possibly reused) pid, a caller waits with
/// ``waitUntilExited(_:)``, which does not reap, then reaps with ``reap(_:blocking:)`` under the
/// same lock it takes to send signals.
package enum ChildWait {
    /// Blocks until `pid` has exited, without reaping it (`waitid(..., WEXITED | WNOWAIT)`).
    ///
    /// - Throws: ``Errno`` (`ECHILD`: not a child, or already reaped).
    package static func waitUntilExited(_ pid: pid_t) throws(Errno) {
        var info = siginfo_t()
        try Errno.retryingOnInterrupt { () -> Int32 in waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
    }

    /// Reaps `pid` if it has exited (`waitpid`).
    ///
    /// - Parameter blocking: Wait for the exit (`false`: `WNOHANG`).
    /// - Returns: How it ended, or `nil` when it still runs (only when not `blocking`).
    /// - Throws: ``Errno`` (`ECHILD`: someone else reaped it).
    package static func reap(_ pid: pid_t, blocking: Bool) throws(Errno) -> TerminationStatus? {
        var raw: Int32 = 0
        let reaped = try Errno.retryingOnInterrupt { () -> Int32 in waitpid(pid, &raw, blocking ? 0 : WNOHANG)
        }
        return reaped == pid ? TerminationStatus(waitStatus: raw) : nil
    }
}
