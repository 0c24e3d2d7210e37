import Dispatch
import Foundation
public import KinesiaSystem
import Synchronization

/// Runs a ``Topology``: starts its processes, restarts those that die, and stops them all in
/// drain order when asked.
///
/// The supervisor is a thin shell around ``SupervisorStateMachine``, which makes every
/// decision: the shell only spawns processes (``ChildProcess``, `posix_spawn`, each child in
/// its own process group), sends signals, reports events and wakes the machine at its
/// deadlines. Nothing polls: child exits arrive from the threads that wait for them, timers
/// from a sleep on the supervisor's clock (a ``ManualClock`` in tests) in a child task.
///
/// ```swift
/// let signals = SignalStream([.interrupt, .terminate])  // before any child exists
/// let supervisor = Supervisor(topology: try Topology.load(contentsOf: url))
/// let runner = ServiceRunner(logger: nil, stopDeadline: nil, forcedEnd: .cancelService)
/// let status = try await runner.run(supervisor, signals: signals)
/// ```
///
/// ``run()`` returns only when every child has stopped and been reaped, so no process is left
/// behind; cancelling the task that runs it counts as a shutdown request (it still waits for
/// the children, at most the shutdown deadlines). As a ``Service`` (``run(until:)``), the stop
/// token's request is the graceful shutdown and the cancellation that a ``ServiceRunner``
/// makes of a second Control-C is the second request, which kills every child at once.
public final class Supervisor: Sendable {
    /// The topology being run.
    public let topology: Topology
    /// The executable that runs the `kinesia` commands of the topology.
    public let kinesiaExecutable: String

    private enum Input: Sendable {
        case child(name: String, event: ChildProcess.Event)
        case shutdown(ProcessSignal?)
        case timer
    }

    private let onEvent: @Sendable (SupervisorEvent) -> Void
    /// Makes the machine's time (start settling, back-off, shutdown deadlines) at the start of
    /// a run, on the clock given.
    private let startTime: @Sendable () -> ElapsedClock
    private let inputs = Mailbox<Input>()
    private let hasRun = Atomic<Bool>(false)

    /// Creates a supervisor; nothing starts before ``run()``.
    ///
    /// - Parameters:
    ///   - topology: A validated topology.
    ///   - kinesiaExecutable: The `kinesia` executable for the processes without an
    ///     `executable` override; by default the running executable itself.
    ///   - onEvent: Receives every ``SupervisorEvent``; by default each is printed on standard
    ///     error as `kinesia up: ...`. Called from the task that runs ``run()``.
    ///   - clock: What the deadlines are timed on (a ``ManualClock`` in tests).
    public init(
        topology: Topology, kinesiaExecutable: String = Supervisor.currentExecutable(),
        onEvent: @escaping @Sendable (SupervisorEvent) -> Void = Supervisor.printEvent,
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        startTime = { ElapsedClock(clock) }
        self.topology = topology
        self.kinesiaExecutable = kinesiaExecutable
        self.onEvent = onEvent
    }

    /// Asks for the graceful shutdown (a second call kills every child at once). Safe from any
    /// thread, before or during ``run()``.
    ///
    /// - Parameter signal: The signal that caused the request, for the report.
    public func requestShutdown(signal: ProcessSignal? = nil) {
        inputs.post(.shutdown(signal))
    }

    /// Starts the topology and supervises it until every process has stopped.
    ///
    /// - Returns: The exit status for `kinesia up`: 0 after a clean run or graceful shutdown,
    ///   1 when a process was given up or failed, or a broker stopped (see
    ///   ``SupervisorStateMachine``).
    public func run() async -> Int32 {
        precondition(!hasRun.exchange(true, ordering: .relaxed), "Supervisor.run() runs once")
        return await withTaskCancellationHandler {
            await loop()
        } onCancel: {
            requestShutdown()
        }
    }

    private func loop() async -> Int32 {
        // The timers sleep in child tasks, cancelled when the run ends.
        let ended = Flag()
        return await withDiscardingTaskGroup { timers in
            let status = await loop(timers: &timers, ended: ended)
            ended.set()
            timers.cancelAll()
            return status
        }
    }

    /// Set once a run has ended, before its timers are cancelled.
    private final class Flag: Sendable {
        private let raw = Atomic<Bool>(false)
        func set() { raw.store(true, ordering: .releasing) }
        var isSet: Bool { raw.load(ordering: .acquiring) }
    }

    private func loop(timers: inout DiscardingTaskGroup, ended: Flag) async -> Int32 {
        let elapsed = startTime()
        var machine = SupervisorStateMachine(topology: topology)
        var children: [String: ChildProcess] = [:]
        var scheduled: Duration?
        let environment = ProcessInfo.processInfo.environment
        let supervisorPID = ProcessIdentity.id

        func perform(_ actions: [SupervisorStateMachine.Action]) {
            for action in actions {
                switch action {
                case .start(let name):
                    guard let spec = topology.processes.first(where: { $0.name == name }) else { continue }
                    let launch = Self.launch(
                        for: spec, in: topology, kinesiaExecutable: kinesiaExecutable,
                        environment: environment, supervisorPID: supervisorPID)
                    let inputs = self.inputs
                    children[name] = ChildProcess.launch(launch, name: name) { event in
                        inputs.post(.child(name: name, event: event))
                    }
                case .signal(let name, _, let signal):
                    children[name]?.send(signal)
                case .report(let event):
                    onEvent(event)
                }
            }
        }

        perform(machine.start(at: elapsed.now))
        while !machine.isFinished {
            if let next = machine.nextDeadline, scheduled.map({ next < $0 }) ?? true {
                scheduled = next
                let inputs = self.inputs
                timers.addTask {
                    // Until the deadline itself, not a delay from whenever the task starts (a
                    // late task would wake late).
                    do {
                        try await elapsed.sleep(until: next)
                    } catch {
                        // Cancelled. At the end of the run: nothing to do. Otherwise the task
                        // running the supervisor was cancelled, which is a shutdown request
                        // whose deadlines must still come: waited on the wall clock, which a
                        // cancelled task's sleep no longer waits on.
                        guard !ended.isSet else { return }
                        let remaining = Self.dispatchInterval(max(.zero, next - elapsed.now))
                        DispatchQueue.global().asyncAfter(deadline: .now() + remaining) {
                            inputs.post(.timer)
                        }
                        return
                    }
                    inputs.post(.timer)
                }
            }
            let input = await inputs.next()
            let now = elapsed.now
            switch input {
            case .timer:
                // Whichever timer fired (an early one, or one made stale by a later decision),
                // the next deadline is scheduled again below: never left without a wake-up.
                scheduled = nil
                perform(machine.timerFired(at: now))
            case .shutdown(let signal):
                perform(machine.shutdownRequested(signal: signal, at: now))
            case .child(let name, .spawned(let pid)):
                perform(machine.childStarted(name, pid: pid, at: now))
            case .child(let name, .spawnFailed(let reason)):
                children[name] = nil
                perform(machine.childFailedToStart(name, reason: reason, at: now))
            case .child(let name, .exited(let pid, let status)):
                children[name] = nil
                perform(machine.childExited(name, pid: pid, status: status, at: now))
            }
        }
        return machine.exitStatus ?? 1
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}

extension Supervisor {
    /// How a process of the topology is run: the executable, the full argument vector and the
    /// environment.
    ///
    /// A `kinesia` command (no `executable` override) gets `--bus BUS` appended when the
    /// topology has a bus and the command has no `--bus` of its own. Every process gets
    /// `KINESIA_BUS` (when there is a bus), `KINESIA_PROCESS_NAME` and the process's own
    /// `environment` on top of `environment`; a `kinesia` command also gets
    /// `KINESIA_SUPERVISOR_PID` (for ``ParentDeathSignal``).
    static func launch(
        for spec: ProcessSpec, in topology: Topology, kinesiaExecutable: String,
        environment: [String: String], supervisorPID: Int32
    ) -> ChildProcess.Launch {
        let executable = spec.executable ?? kinesiaExecutable
        var arguments = spec.command
        if spec.executable == nil, let bus = topology.bus,
            !arguments.contains(where: { $0 == "--bus" || $0.hasPrefix("--bus=") })
        {
            let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
            arguments.insert(contentsOf: ["--bus", bus], at: end)
        }
        var variables = environment
        if let bus = topology.bus { variables["KINESIA_BUS"] = bus }
        variables["KINESIA_PROCESS_NAME"] = spec.name
        if spec.executable == nil {
            // Only for a direct kinesia child: a wrapper script's kinesia would not be ours.
            variables[ChildProcess.parentPIDVariable] = String(supervisorPID)
        } else {
            variables[ChildProcess.parentPIDVariable] = nil
        }
        variables.merge(spec.environment) { _, own in own }
        return ChildProcess.Launch(
            executable: executable, arguments: [executable] + arguments,
            environment: variables.map { "\($0.key)=\($0.value)" }.sorted())
    }

    /// The path of the running executable (`/proc/self/exe`), or `CommandLine.arguments[0]`
    /// made absolute when `/proc` is not mounted.
    public static func currentExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !path.hasSuffix(" (deleted)") { return path }
        }
        let first = CommandLine.arguments.first ?? "kinesia"
        guard first.contains("/") else { return first }
        return URL(fileURLWithPath: first).standardizedFileURL.path
    }

    /// Prints `kinesia up: EVENT` on standard error.
    public static func printEvent(_ event: SupervisorEvent) {
        printLine("kinesia up: \(event)")
    }

    /// Writes one line on standard error (unbuffered, so lines of several processes interleave
    /// whole).
    public static func printLine(_ line: String) {
        let text = line + "\n"
        text.withCString { pointer in
            _ = write(STDERR_FILENO, pointer, strlen(pointer))
        }
    }
}
