import Foundation
import Glibc
import Synchronization

/// One child process, spawned with `posix_spawn` and reaped by a thread of its own.
///
/// Why not `Foundation.Process`: it cannot put a child in a process group of its own, reset the
/// signal dispositions the parent ignores (a supervisor ignores SIGINT/SIGTERM to receive them
/// as a ``SignalStream``, and ignored signals survive `exec`), or keep the child's reaping
/// deterministic. `posix_spawn` (``ProcessSpawn``) does all of that without running Swift code between `fork`
/// and `exec`:
///
/// - **Own process group** (`POSIX_SPAWN_SETPGROUP`): Control-C at the terminal reaches only
///   the supervisor, which then stops the children in drain order instead of all at once; and
///   a stop signal goes to the whole group (`kill(-pid, ...)`), so whatever the child started
///   (a shell's subprocesses) stops with it.
/// - **Default signal dispositions and an empty mask** (`POSIX_SPAWN_SETSIGDEF`,
///   `POSIX_SPAWN_SETSIGMASK`): SIGTERM works in the child even though the parent ignores it.
/// - **Standard input from `/dev/null`** (a background process group reading the terminal
///   would be stopped by SIGTTIN) and **every descriptor above 2 closed**
///   (`posix_spawn_file_actions_addclosefrom_np`, found at run time as Swift does not see the
///   GNU declarations): no socket or pipe of the supervisor leaks into a child.
/// - **Parent-death signal**: `prctl(PR_SET_PDEATHSIG)` must run in the child, which
///   `posix_spawn` cannot do, so the environment carries ``parentPIDVariable`` and a `kinesia`
///   child calls ``ParentDeathSignal/adoptFromEnvironment()`` at start. The kernel sends the
///   signal when the *thread* that spawned the child ends; here that thread is the one that
///   waits for the child, so it lives exactly as long as the child.
///
/// Reaping: the thread blocks in `waitid(..., WNOWAIT)` (no polling, no CPU), then reaps with
/// `waitpid` under the same lock that ``send(_:)`` takes, so a signal is never sent to a pid
/// that was already reaped (and possibly reused). Only this child's pid is waited for, so
/// other children of the same process (a test runner's) are left alone.
package final class ChildProcess: Sendable {
    /// What to run.
    package struct Launch: Hashable, Sendable {
        /// The executable: a path, or a name found on `PATH` when it has no `/`.
        package var executable: String
        /// The complete argument vector, `argv[0]` included.
        package var arguments: [String]
        /// The complete environment, as `NAME=value` strings.
        package var environment: [String]

        /// Describes a launch.
        package init(executable: String, arguments: [String], environment: [String]) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
        }
    }

    /// What happens to the child, delivered in this order from the child's thread.
    package enum Event: Hashable, Sendable {
        /// It runs with this pid.
        case spawned(pid: Int32)
        /// `posix_spawn` failed (no such executable, permissions...).
        case spawnFailed(reason: String)
        /// It ended and was reaped.
        case exited(pid: Int32, status: TerminationStatus)
    }

    private enum State {
        case launching
        case running(pid: Int32)
        case reaped
    }

    /// The variable that carries the supervisor's pid to a child.
    package static let parentPIDVariable = "KINESIA_SUPERVISOR_PID"

    private let state = Mutex<State>(.launching)

    private init() {}

    /// Starts `launch` on a new thread and reports its ``Event``s through `onEvent`.
    ///
    /// - Parameters:
    ///   - launch: What to run.
    ///   - name: A name for the thread (debugging only).
    ///   - onEvent: Called on the child's thread: `.spawned` then `.exited`, or `.spawnFailed`.
    /// - Returns: The handle used to signal the child.
    package static func launch(
        _ launch: Launch, name: String, onEvent: @escaping @Sendable (Event) -> Void
    ) -> ChildProcess {
        let child = ChildProcess()
        let thread = Thread {
            child.spawnAndWait(launch, onEvent: onEvent)
        }
        thread.name = "kinesia-up-\(name)"
        thread.start()
        return child
    }

    /// Sends `signal` to the child's process group (the child and whatever it started); does
    /// nothing once the child has been reaped.
    ///
    /// - Returns: Whether a signal was sent.
    @discardableResult
    package func send(_ signal: ProcessSignal) -> Bool {
        state.withLock { state in
            guard case .running(let pid) = state else { return false }
            if kill(-pid, signal.rawValue) == 0 { return true }
            // The child may have left its group (setsid): signal it alone.
            return kill(pid, signal.rawValue) == 0
        }
    }

    private func spawnAndWait(_ launch: Launch, onEvent: @Sendable (Event) -> Void) {
        let pid: Int32
        do {
            pid = try ProcessSpawn(
                executable: launch.executable, arguments: launch.arguments, environment: launch.environment
            ).spawn()
        } catch {
            state.withLock { $0 = .reaped }
            onEvent(.spawnFailed(reason: error.description))
            return
        }
        state.withLock { $0 = .running(pid: pid) }
        onEvent(.spawned(pid: pid))

        // Wait without reaping, so that `send` never signals a reaped (reusable) pid.
        try? ChildWait.waitUntilExited(pid)
        let status: TerminationStatus = state.withLock { state in
            state = .reaped
            // ECHILD: someone else reaped it; the status is unknown.
            return (try? ChildWait.reap(pid, blocking: true)) ?? .exited(-1)
        }
        onEvent(.exited(pid: pid, status: status))
    }
}
