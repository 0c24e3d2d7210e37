public import KinesiaSystem

/// The exit status of a `kinesia` usage error (`EX_USAGE`): a wrong command line, never restarted.
private let usageErrorStatus: Int32 = 64

/// Every decision of `kinesia up`, with no process, no clock and no I/O.
///
/// The machine is told what happened (``start(at:)``, ``childStarted(_:pid:at:)``,
/// ``childExited(_:pid:status:at:)``, ``shutdownRequested(signal:at:)``, ``timerFired(at:)``)
/// and answers with ``Action``s: start a process, signal one, report an event. It also says
/// when it next needs to be woken (``nextDeadline``) and, once everything has stopped, the exit
/// status (``exitStatus``). Time is a `Duration` since the supervisor started, passed in by the
/// caller: ``Supervisor`` passes the continuous clock, tests pass whatever they like.
///
/// Decisions:
/// - **Start order**: a process starts once every process it depends on (its `after` list,
///   every broker, and for an ingest every worker and consumer, see
///   ``Topology/startDependencies()``) has been running for ``StartupPolicy/settle`` (or has
///   stopped for good). Ties start in file order.
/// - **Restarts**: by the process's ``RestartPolicy``, after the ``Backoff`` delay; past
///   ``RestartLimits/maxRestarts`` restarts within ``RestartLimits/window`` the supervisor gives
///   up on that process and keeps the others running. Status 64 (a usage error: the command
///   line in the topology is wrong) is never restarted, whatever the policy.
/// - **A broker that stops for good** (given up, or not restarted by its policy) makes the
///   supervisor shut everything down: nothing can work without it.
/// - **Shutdown** runs in stages, ``ProcessRole/drainOrder``: ingests, workers, consumers,
///   brokers. Each stage sends SIGTERM to its running processes, waits until they have all
///   exited, and sends SIGKILL to those still running ``ShutdownPolicy/deadline`` after the
///   SIGTERM; then the next stage begins. Nothing is restarted or started any more. A second
///   shutdown request sends SIGKILL to every process still running.
/// - **Exit status**: 0 when every process stopped as asked or as its policy allows; 1 when
///   the supervisor gave up on a process (one that could not even be spawned included), a
///   process with restart `never` failed, a process ended with a usage error, or a broker
///   stopped for good; that holds after
///   a graceful shutdown too, so a script or systemd sees that the topology was degraded.
///   When nothing is left running and nothing will be restarted, the machine finishes by itself.
public struct SupervisorStateMachine: Sendable {
    /// What the shell must do.
    public enum Action: Hashable, Sendable {
        /// Spawn the named process; answer with ``childStarted(_:pid:at:)`` or
        /// ``childFailedToStart(_:reason:at:)``, later ``childExited(_:pid:status:at:)``.
        case start(name: String)
        /// Send `signal` to the process group of `pid`.
        case signal(name: String, pid: Int32, signal: ProcessSignal)
        /// Tell the user.
        case report(SupervisorEvent)
    }

    /// Where one process is in its life.
    public enum ChildState: Hashable, Sendable {
        /// Not started yet: waiting for the processes it comes after.
        case waiting
        /// Asked to start; no pid yet.
        case starting
        /// Running since `since`.
        case running(pid: Int32, since: Duration)
        /// Exited; starts again at `until`.
        case backingOff(until: Duration)
        /// Sent a stop signal during the shutdown; `killed` once SIGKILL went out.
        case stopping(pid: Int32, killed: Bool)
        /// Will not run again.
        case done(Outcome)
    }

    /// Why a process will not run again.
    public enum Outcome: Hashable, Sendable {
        /// It exited and its policy does not restart it (success, or `on-failure` after status 0).
        case completed
        /// It failed and its policy is `never`.
        case failed
        /// It failed more often than the restart limit allows.
        case gaveUp
        /// The shutdown stopped it (or it was never started because of the shutdown).
        case shutDown
    }

    private enum Phase: Hashable {
        case idle
        case running
        /// Draining ``ProcessRole/drainOrder``[stage]; SIGKILL at `deadline` (nil once sent).
        case shuttingDown(stage: Int, deadline: Duration?)
        case finished(exitStatus: Int32)
    }

    private struct Child {
        let spec: ProcessSpec
        let dependencies: [Int]
        var state: ChildState = .waiting
        var backoff: Backoff

        /// Running, starting or stopping: a process the shutdown must wait for.
        var isAlive: Bool {
            switch state {
            case .starting, .running, .stopping: true
            case .waiting, .backingOff, .done: false
            }
        }
    }

    private let topology: Topology
    private var children: [Child]
    private let indexOfName: [String: Int]
    private var phase: Phase = .idle
    /// Whether the exit status must be 1 (gave up, failed, broker lost).
    private var degraded = false
    /// Whether a second request already forced the shutdown.
    private var forced = false

    /// Creates the machine for a validated topology.
    public init(topology: Topology) {
        self.topology = topology
        let dependencies = topology.startDependencies()
        self.children = topology.processes.enumerated().map { index, spec in
            Child(spec: spec, dependencies: dependencies[index], backoff: Backoff(limits: topology.restart))
        }
        self.indexOfName = Dictionary(
            topology.processes.enumerated().map { ($0.element.name, $0.offset) },
            uniquingKeysWith: { first, _ in first })
    }

    // MARK: Queries

    /// The state of the named process (nil for an unknown name).
    public func state(of name: String) -> ChildState? {
        indexOfName[name].map { children[$0].state }
    }

    /// Whether every process has stopped and the supervisor should exit.
    public var isFinished: Bool {
        if case .finished = phase { true } else { false }
    }

    /// The status `kinesia up` exits with, once ``isFinished``.
    public var exitStatus: Int32? {
        if case .finished(let status) = phase { status } else { nil }
    }

    /// When ``timerFired(at:)`` must next be called, or `nil` when only a process event can
    /// change anything.
    public var nextDeadline: Duration? {
        switch phase {
        case .idle, .finished:
            return nil
        case .shuttingDown(_, let deadline):
            return deadline
        case .running:
            var earliest: Duration?
            for index in children.indices {
                let candidate: Duration?
                switch children[index].state {
                case .backingOff(let until): candidate = until
                case .waiting: candidate = readyTime(of: index)
                default: candidate = nil
                }
                if let candidate, earliest.map({ candidate < $0 }) ?? true {
                    earliest = candidate
                }
            }
            return earliest
        }
    }

    // MARK: Inputs

    /// Begins: starts every process whose dependencies are met (the brokers, at first).
    public mutating func start(at now: Duration) -> [Action] {
        guard case .idle = phase else { return [] }
        phase = .running
        return startReadyChildren(at: now)
    }

    /// The process asked for with ``Action/start(name:)`` runs with `pid`.
    public mutating func childStarted(_ name: String, pid: Int32, at now: Duration) -> [Action] {
        guard let index = indexOfName[name], case .starting = children[index].state else { return [] }
        children[index].state = .running(pid: pid, since: now)
        var actions: [Action] = [.report(.started(name: name, pid: pid))]
        switch phase {
        case .running:
            actions += startReadyChildren(at: now)
        case .shuttingDown(let stage, let deadline):
            // Started while the shutdown runs: stop it with its stage, or now if that has begun.
            if children[index].spec.role.drainStage <= stage {
                let signal: ProcessSignal = (deadline == nil || forced) ? .kill : .terminate
                children[index].state = .stopping(pid: pid, killed: signal == .kill)
                actions.append(.report(.stopping(name: name, pid: pid, signal: signal)))
                actions.append(.signal(name: name, pid: pid, signal: signal))
            }
        case .idle, .finished:
            break
        }
        return actions
    }

    /// The process asked for with ``Action/start(name:)`` could not be spawned; it counts as a
    /// failed exit (restarted with back-off, then given up).
    public mutating func childFailedToStart(_ name: String, reason: String, at now: Duration) -> [Action] {
        guard let index = indexOfName[name], case .starting = children[index].state else { return [] }
        return [.report(.failedToStart(name: name, reason: reason))]
            + afterExit(of: index, status: nil, at: now)
    }

    /// The process with `pid` ended with `status`.
    public mutating func childExited(_ name: String, pid: Int32, status: TerminationStatus, at now: Duration)
        -> [Action]
    {
        guard let index = indexOfName[name] else { return [] }
        switch children[index].state {
        case .running(let current, _) where current == pid, .stopping(let current, _) where current == pid:
            return [.report(.exited(name: name, pid: pid, status: status))]
                + afterExit(of: index, status: status, at: now)
        default:
            return []
        }
    }

    /// SIGINT/SIGTERM (or an API request): begins the staged shutdown; a second request kills
    /// every process still running.
    public mutating func shutdownRequested(signal: ProcessSignal? = nil, at now: Duration) -> [Action] {
        switch phase {
        case .finished:
            return []
        case .idle:
            for index in children.indices { children[index].state = .done(.shutDown) }
            phase = .finished(exitStatus: degraded ? 1 : 0)
            return [.report(.finished(exitStatus: degraded ? 1 : 0))]
        case .running:
            return beginShutdown(reason: .requested(signal), at: now)
        case .shuttingDown(let stage, _):
            guard !forced else { return [] }
            forced = true
            var actions: [Action] = [.report(.forcingShutdown)]
            for index in children.indices {
                switch children[index].state {
                case .running(let pid, _), .stopping(let pid, false):
                    children[index].state = .stopping(pid: pid, killed: true)
                    actions.append(
                        .report(.stopping(name: children[index].spec.name, pid: pid, signal: .kill)))
                    actions.append(.signal(name: children[index].spec.name, pid: pid, signal: .kill))
                default:
                    break
                }
            }
            phase = .shuttingDown(stage: stage, deadline: nil)
            return actions
        }
    }

    /// Time passed: restarts whose back-off is over, processes whose dependencies have
    /// settled, SIGKILL for a shutdown stage past its deadline.
    public mutating func timerFired(at now: Duration) -> [Action] {
        switch phase {
        case .idle, .finished:
            return []
        case .running:
            var actions: [Action] = []
            for index in children.indices {
                if case .backingOff(let until) = children[index].state, until <= now {
                    children[index].state = .starting
                    actions.append(.start(name: children[index].spec.name))
                }
            }
            return actions + startReadyChildren(at: now)
        case .shuttingDown(let stage, let deadline):
            guard let deadline, deadline <= now else { return [] }
            var actions: [Action] = []
            for index in children.indices where children[index].spec.role.drainStage <= stage {
                if case .stopping(let pid, false) = children[index].state {
                    children[index].state = .stopping(pid: pid, killed: true)
                    actions.append(
                        .report(
                            .killing(
                                name: children[index].spec.name, pid: pid,
                                deadline: topology.shutdown.deadline)))
                    actions.append(.signal(name: children[index].spec.name, pid: pid, signal: .kill))
                }
            }
            phase = .shuttingDown(stage: stage, deadline: nil)
            return actions
        }
    }

    // MARK: Decisions

    /// When the waiting process at `index` may start: once every dependency has run for the
    /// settle time or stopped for good; `nil` while one is not running yet.
    private func readyTime(of index: Int) -> Duration? {
        var ready = Duration.zero
        for dependency in children[index].dependencies {
            switch children[dependency].state {
            case .running(_, let since):
                ready = max(ready, since + topology.startup.settle)
            case .done:
                continue
            case .waiting, .starting, .backingOff, .stopping:
                return nil
            }
        }
        return ready
    }

    private mutating func startReadyChildren(at now: Duration) -> [Action] {
        var actions: [Action] = []
        for index in children.indices {
            guard case .waiting = children[index].state, let ready = readyTime(of: index), ready <= now
            else { continue }
            children[index].state = .starting
            actions.append(.start(name: children[index].spec.name))
        }
        return actions
    }

    /// After an exit (or a failed spawn, `status == nil`): restart, give up or finish.
    private mutating func afterExit(of index: Int, status: TerminationStatus?, at now: Duration) -> [Action] {
        let spec = children[index].spec
        switch phase {
        case .shuttingDown:
            children[index].state = .done(.shutDown)
            return advanceShutdown(at: now)
        case .idle, .finished:
            children[index].state = .done(.shutDown)
            return []
        case .running:
            break
        }
        var actions: [Action] = []
        if status == .exited(usageErrorStatus) {
            children[index].state = .done(.failed)
            degraded = true
            actions.append(.report(.usageError(name: spec.name)))
        } else if spec.restart.restarts(after: status) {
            switch children[index].backoff.nextRestart(at: now) {
            case .restart(let delay, let number):
                children[index].state = .backingOff(until: now + delay)
                actions.append(
                    .report(
                        .restarting(
                            name: spec.name, delay: delay, number: number,
                            limit: topology.restart.maxRestarts, window: topology.restart.window)))
                if delay == .zero {
                    children[index].state = .starting
                    actions.append(.start(name: spec.name))
                }
                return actions
            case .giveUp(let restarts):
                children[index].state = .done(.gaveUp)
                degraded = true
                actions.append(
                    .report(.gaveUp(name: spec.name, restarts: restarts, window: topology.restart.window)))
            }
        } else {
            let failed = status.map { !$0.isSuccess } ?? true
            children[index].state = .done(failed ? .failed : .completed)
            if failed { degraded = true }
            actions.append(.report(.notRestarting(name: spec.name, policy: spec.restart)))
        }
        if spec.role == .broker {
            degraded = true
            return actions + beginShutdown(reason: .brokerStopped(name: spec.name), at: now)
        }
        // A process that stopped for good may let others start (it no longer holds them back).
        actions += startReadyChildren(at: now)
        if children.allSatisfy({ if case .done = $0.state { true } else { false } }) {
            let status: Int32 = degraded ? 1 : 0
            phase = .finished(exitStatus: status)
            actions.append(.report(.finished(exitStatus: status)))
        }
        return actions
    }

    private mutating func beginShutdown(reason: SupervisorEvent.ShutdownReason, at now: Duration) -> [Action]
    {
        for index in children.indices {
            switch children[index].state {
            case .waiting, .backingOff:
                children[index].state = .done(.shutDown)
            default:
                break
            }
        }
        phase = .shuttingDown(stage: -1, deadline: nil)
        return [.report(.shuttingDown(reason: reason))] + advanceShutdown(at: now)
    }

    /// Moves to the next stage while the current one has nothing left running; signals the
    /// processes of each stage it enters; finishes after the last stage.
    private mutating func advanceShutdown(at now: Duration) -> [Action] {
        guard case .shuttingDown(var stage, var deadline) = phase else { return [] }
        var actions: [Action] = []
        while true {
            if stage >= 0, stage < ProcessRole.drainOrder.count,
                children.contains(where: { $0.isAlive && $0.spec.role.drainStage <= stage })
            {
                phase = .shuttingDown(stage: stage, deadline: deadline)
                return actions
            }
            stage += 1
            guard stage < ProcessRole.drainOrder.count else {
                let status: Int32 = degraded ? 1 : 0
                phase = .finished(exitStatus: status)
                return actions + [.report(.finished(exitStatus: status))]
            }
            deadline = forced ? nil : now + topology.shutdown.deadline
            let role = ProcessRole.drainOrder[stage]
            for index in children.indices where children[index].spec.role == role {
                guard case .running(let pid, _) = children[index].state else { continue }
                let signal: ProcessSignal = forced ? .kill : .terminate
                children[index].state = .stopping(pid: pid, killed: forced)
                actions.append(.report(.stopping(name: children[index].spec.name, pid: pid, signal: signal)))
                actions.append(.signal(name: children[index].spec.name, pid: pid, signal: signal))
            }
        }
    }
}

extension ProcessRole {
    /// The index of the role's stage in ``drainOrder``.
    var drainStage: Int {
        switch self {
        case .ingest: 0
        case .worker: 1
        case .consumer: 2
        case .broker: 3
        }
    }
}
