import Foundation
import Glibc

/// One child process, spawned with `posix_spawn` and reaped by a thread of its own: the one
/// owner of a child in the package (the supervisor's children, the pose detector, the audio
/// player, the `espeak-ng` command, the tests' processes).
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
/// other children of the same process (a test runner's) are left alone. Waiting for the exit
/// (``waitForExit(timeout:clock:)``, ``stop(grace:clock:)``) blocks on a condition the thread
/// signals: no polling either (a timed wait also reads its clock again every 100 ms).
///
/// ```swift
/// let child = try ChildProcess(ProcessSpawn(executable: "aplay", arguments: ["aplay", file], environment: env))
/// let status = child.waitForExit()           // blocks until it ends
/// let stopped = other.stop(grace: .seconds(2)) // SIGTERM to its group, SIGKILL after 2 s
/// ```
package final class ChildProcess: @unchecked Sendable {
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
        case spawnFailed(ProcessSpawn.Failure)
        case reaped(pid: Int32, status: TerminationStatus)
    }

    /// The variable that carries the supervisor's pid to a child.
    package static let parentPIDVariable = "KINESIA_SUPERVISOR_PID"

    /// The state, under the condition's lock; the condition is signalled at every change.
    private var state = State.launching
    private let changed = NSCondition()

    private init() {}

    /// Starts `launch` on a new thread and reports its ``Event``s through `onEvent`, without
    /// waiting for the spawn (the supervisor's children).
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
        child.start(
            ProcessSpawn(
                executable: launch.executable, arguments: launch.arguments, environment: launch.environment),
            name: "kinesia-up-\(name)", onEvent: onEvent)
        return child
    }

    /// Spawns `spawn` from a thread of its own (which then waits for the child's exit) and
    /// returns once it runs.
    ///
    /// - Parameter name: A name for the thread (debugging only).
    /// - Throws: ``ProcessSpawn/Failure`` when it cannot be spawned.
    package convenience init(_ spawn: ProcessSpawn, name: String = "kinesia-child") throws(ProcessSpawn
        .Failure)
    {
        self.init()
        start(spawn, name: name, onEvent: { _ in })
        changed.lock()
        defer { changed.unlock() }
        while case .launching = state { changed.wait() }
        if case .spawnFailed(let failure) = state { throw failure }
    }

    /// The child's pid (`nil` before it runs or when it could not be spawned).
    package var pid: Int32? {
        changed.lock()
        defer { changed.unlock() }
        switch state {
        case .running(let pid), .reaped(let pid, _): return pid
        case .launching, .spawnFailed: return nil
        }
    }

    /// How it ended, once it has been reaped (`nil` while it runs).
    package var status: TerminationStatus? {
        changed.lock()
        defer { changed.unlock() }
        if case .reaped(_, let status) = state { return status }
        return nil
    }

    /// Sends `signal` to the child's process group (the child and whatever it started), or to
    /// the child alone; does nothing once the child has been reaped.
    ///
    /// - Returns: Whether a signal was sent.
    @discardableResult
    package func send(_ signal: ProcessSignal, toGroup: Bool = true) -> Bool {
        changed.lock()
        defer { changed.unlock() }
        guard case .running(let pid) = state else { return false }
        if toGroup, kill(-pid, signal.rawValue) == 0 { return true }
        // The child may have left its group (setsid): signal it alone.
        return kill(pid, signal.rawValue) == 0
    }

    /// Blocks until the child has been reaped, or for at most `timeout` on `clock`.
    ///
    /// - Parameters:
    ///   - timeout: The limit (`nil`: none).
    ///   - clock: What the limit is timed on (a ``ManualClock`` in tests): the wait is woken at
    ///     once by the child's reaping, and reads the clock again at least every 100 ms.
    /// - Returns: How it ended; `nil` when it still runs after `timeout`, or was never spawned.
    @discardableResult
    package func waitForExit(
        timeout: Duration? = nil, clock: some Clock<Duration> = ContinuousClock()
    ) -> TerminationStatus? {
        let elapsed = ElapsedClock(clock)
        let wait = timeout.map { TimedWait(limit: $0, startedAt: elapsed.now) }
        changed.lock()
        defer { changed.unlock() }
        while true {
            switch state {
            case .reaped(_, let status): return status
            case .spawnFailed: return nil
            case .launching, .running: break
            }
            if let wait {
                guard let remaining = wait.remaining(at: elapsed.now) else { return nil }
                // The condition's own timer is the real clock's: a step of it at most, then the
                // clock is read again (a spurious wake-up, or a timeout, is checked the same way).
                _ = changed.wait(
                    until: Date(timeIntervalSinceNow: min(remaining, Self.clockReadStep).seconds))
            } else {
                changed.wait()
            }
        }
    }

    /// The longest a timed wait sleeps on the condition before it reads its clock again.
    static let clockReadStep = Duration.milliseconds(100)

    /// SIGTERM to the child's group; SIGKILL when it still runs after `grace` on `clock`; then
    /// waits for it to be reaped.
    ///
    /// - Parameters:
    ///   - grace: How long the child has to end after the SIGTERM.
    ///   - clock: What the grace is timed on (a ``ManualClock`` in tests), as in
    ///     ``waitForExit(timeout:clock:)``.
    /// - Returns: How it ended (`nil` only when it was never spawned).
    @discardableResult
    package func stop(
        grace: Duration, clock: some Clock<Duration> = ContinuousClock()
    ) -> TerminationStatus? {
        send(.terminate)
        return waitForExit(killingAfter: grace, clock: clock)
    }

    /// Waits at most `grace` on `clock` for the child to end by itself, then SIGKILLs its group
    /// and waits for it to be reaped: never blocks for good (on a clock that moves).
    ///
    /// - Parameters:
    ///   - grace: How long the child has to end by itself.
    ///   - clock: What the grace is timed on (a ``ManualClock`` in tests), as in
    ///     ``waitForExit(timeout:clock:)``.
    /// - Returns: How it ended (`nil` only when it was never spawned).
    @discardableResult
    package func waitForExit(
        killingAfter grace: Duration, clock: some Clock<Duration> = ContinuousClock()
    ) -> TerminationStatus? {
        if let status = waitForExit(timeout: grace, clock: clock) { return status }
        send(.kill)
        return waitForExit()
    }

    private func start(_ spawn: ProcessSpawn, name: String, onEvent: @escaping @Sendable (Event) -> Void) {
        Thread.named(name) { self.spawnAndWait(spawn, onEvent: onEvent) }.start()
    }

    private func update(_ new: State) {
        changed.lock()
        state = new
        changed.broadcast()
        changed.unlock()
    }

    private func spawnAndWait(_ spawn: ProcessSpawn, onEvent: @Sendable (Event) -> Void) {
        let pid: Int32
        do {
            pid = try spawn.spawn()
        } catch {
            update(.spawnFailed(error))
            onEvent(.spawnFailed(reason: error.description))
            return
        }
        update(.running(pid: pid))
        onEvent(.spawned(pid: pid))

        // Wait without reaping, so that `send` never signals a reaped (reusable) pid.
        try? ChildWait.waitUntilExited(pid)
        changed.lock()
        // ECHILD: someone else reaped it; the status is unknown.
        let status = (try? ChildWait.reap(pid, blocking: true)) ?? .exited(-1)
        state = .reaped(pid: pid, status: status)
        changed.broadcast()
        changed.unlock()
        onEvent(.exited(pid: pid, status: status))
    }
}
