import KinesiaSystem
import Testing

@testable import KinesiaSupervisor

/// The supervisor's decisions, driven with no process and a manual time (durations since start).
struct SupervisorStateMachineTests {
    typealias Action = SupervisorStateMachine.Action

    static func process(
        _ name: String, _ role: ProcessRole, restart: RestartPolicy = .onFailure, after: [String] = []
    ) -> ProcessSpec {
        ProcessSpec(name: name, command: [role.rawValue], restart: restart, role: role, after: after)
    }

    static func topology(
        _ processes: [ProcessSpec], settle: Duration = .zero, deadline: Duration = .seconds(5),
        limits: RestartLimits = RestartLimits(
            initialDelay: .seconds(1), maxDelay: .seconds(3), maxRestarts: 3, window: .seconds(60))
    ) -> Topology {
        Topology(
            processes: processes, shutdown: ShutdownPolicy(deadline: deadline), restart: limits,
            startup: StartupPolicy(settle: settle))
    }

    /// broker, left (worker), listen (consumer), ingest: the usual fan-out.
    static let fanOut = [
        process("ingest", .ingest), process("left", .worker), process("listen", .consumer),
        process("broker", .broker),
    ]

    static func starts(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .start(let name) = $0 { name } else { nil } }
    }

    static func signals(_ actions: [Action]) -> [String] {
        actions.compactMap {
            if case .signal(let name, _, let signal) = $0 { "\(name) \(signal)" } else { nil }
        }
    }

    static func reports(_ actions: [Action]) -> [SupervisorEvent] {
        actions.compactMap { if case .report(let event) = $0 { event } else { nil } }
    }

    /// Starts everything of `fanOut` (settle zero) with pids 100, 101...; returns the machine.
    static func runningFanOut(deadline: Duration = .seconds(5)) -> SupervisorStateMachine {
        var machine = SupervisorStateMachine(topology: topology(fanOut, deadline: deadline))
        var pending = starts(machine.start(at: .zero))
        var pid: Int32 = 100
        while !pending.isEmpty {
            let name = pending.removeFirst()
            pending += starts(machine.childStarted(name, pid: pid, at: .zero))
            pid += 1
        }
        return machine
    }

    @Test func startsTheBrokerFirstThenWorkersAndConsumersThenIngestEachAfterTheSettleTime() {
        var machine = SupervisorStateMachine(topology: Self.topology(Self.fanOut, settle: .milliseconds(200)))
        #expect(Self.starts(machine.start(at: .zero)) == ["broker"])
        #expect(machine.nextDeadline == nil)  // nothing to do before the broker runs
        #expect(
            Self.reports(machine.childStarted("broker", pid: 10, at: .milliseconds(5))) == [
                .started(name: "broker", pid: 10)
            ])
        #expect(machine.nextDeadline == .milliseconds(205))
        #expect(Self.starts(machine.timerFired(at: .milliseconds(100))) == [])
        #expect(Self.starts(machine.timerFired(at: .milliseconds(205))) == ["left", "listen"])
        _ = machine.childStarted("left", pid: 11, at: .milliseconds(210))
        #expect(Self.starts(machine.childStarted("listen", pid: 12, at: .milliseconds(250))) == [])
        #expect(machine.nextDeadline == .milliseconds(450))
        #expect(Self.starts(machine.timerFired(at: .milliseconds(450))) == ["ingest"])
    }

    @Test func honoursAnExplicitAfterBetweenProcessesOfTheSameRole() {
        let processes = [
            Self.process("broker", .broker), Self.process("late", .worker, after: ["early"]),
            Self.process("early", .worker),
        ]
        var machine = SupervisorStateMachine(topology: Self.topology(processes))
        #expect(Self.starts(machine.start(at: .zero)) == ["broker"])
        #expect(Self.starts(machine.childStarted("broker", pid: 1, at: .zero)) == ["early"])
        #expect(Self.starts(machine.childStarted("early", pid: 2, at: .zero)) == ["late"])
    }

    @Test func restartsADyingChildWithDoublingDelaysCappedAndGivesUpAfterTheLimit() {
        var machine = Self.runningFanOut()
        var pid: Int32 = 200
        var time = Duration.seconds(10)
        var delays: [Duration] = []
        for _ in 0..<3 {
            let currentPID: Int32
            if case .running(let running, _) = machine.state(of: "left") {
                currentPID = running
            } else {
                Issue.record("left is not running: \(String(describing: machine.state(of: "left")))")
                return
            }
            let actions = machine.childExited("left", pid: currentPID, status: .exited(1), at: time)
            guard case .restarting(_, let delay, _, _, _) = Self.reports(actions).last else {
                Issue.record("no restart in \(actions)")
                return
            }
            delays.append(delay)
            #expect(machine.state(of: "left") == .backingOff(until: time + delay))
            #expect(machine.nextDeadline == time + delay)
            #expect(Self.starts(machine.timerFired(at: time + delay - .milliseconds(1))) == [])
            time += delay
            #expect(Self.starts(machine.timerFired(at: time)) == ["left"])
            _ = machine.childStarted("left", pid: pid, at: time)
            pid += 1
            time += .milliseconds(100)
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(3)])
        let last = machine.childExited("left", pid: pid - 1, status: .signaled(.kill), at: time)
        #expect(
            Self.reports(last) == [
                .exited(name: "left", pid: pid - 1, status: .signaled(.kill)),
                .gaveUp(name: "left", restarts: 3, window: .seconds(60)),
            ])
        #expect(machine.state(of: "left") == .done(.gaveUp))
        #expect(machine.state(of: "broker") == .running(pid: 100, since: .zero))
        #expect(!machine.isFinished)
        #expect(machine.nextDeadline == nil)
    }

    @Test func countsRestartsOnlyWithinTheWindowSoASporadicCrashStartsFromTheInitialDelay() {
        var machine = Self.runningFanOut()
        var pid: Int32 = 100
        if case .running(let running, _) = machine.state(of: "left") { pid = running }
        var delays: [Duration] = []
        for minute in 1...5 {
            let time = Duration.seconds(61 * minute)
            let actions = machine.childExited("left", pid: pid, status: .exited(2), at: time)
            if case .restarting(_, let delay, let number, _, _) = Self.reports(actions).last {
                delays.append(delay)
                #expect(number == 1)
            }
            _ = machine.timerFired(at: time + .seconds(1))
            pid += 100
            _ = machine.childStarted("left", pid: pid, at: time + .seconds(1))
        }
        #expect(delays == Array(repeating: .seconds(1), count: 5))
    }

    @Test func followsEachRestartPolicyAfterASuccessfulExit() {
        let processes = [
            Self.process("broker", .broker), Self.process("always", .worker, restart: .always),
            Self.process("onFailure", .worker, restart: .onFailure),
            Self.process("never", .consumer, restart: .never),
        ]
        var machine = SupervisorStateMachine(topology: Self.topology(processes))
        _ = machine.start(at: .zero)
        _ = machine.childStarted("broker", pid: 1, at: .zero)
        _ = machine.childStarted("always", pid: 2, at: .zero)
        _ = machine.childStarted("onFailure", pid: 3, at: .zero)
        _ = machine.childStarted("never", pid: 4, at: .zero)
        _ = machine.childExited("always", pid: 2, status: .exited(0), at: .seconds(1))
        _ = machine.childExited("onFailure", pid: 3, status: .exited(0), at: .seconds(1))
        _ = machine.childExited("never", pid: 4, status: .exited(0), at: .seconds(1))
        #expect(machine.state(of: "always") == .backingOff(until: .seconds(2)))
        #expect(machine.state(of: "onFailure") == .done(.completed))
        #expect(machine.state(of: "never") == .done(.completed))
        #expect(!machine.isFinished)
    }

    @Test func finishesByItselfWithStatusZeroWhenEveryProcessCompleted() {
        let processes = [Self.process("one", .consumer, restart: .never), Self.process("two", .consumer)]
        var machine = SupervisorStateMachine(topology: Self.topology(processes))
        #expect(Self.starts(machine.start(at: .zero)) == ["one", "two"])
        _ = machine.childStarted("one", pid: 1, at: .zero)
        _ = machine.childStarted("two", pid: 2, at: .zero)
        _ = machine.childExited("one", pid: 1, status: .exited(0), at: .seconds(1))
        let last = machine.childExited("two", pid: 2, status: .exited(0), at: .seconds(2))
        #expect(Self.reports(last).last == .finished(exitStatus: 0))
        #expect(machine.exitStatus == 0)
    }

    @Test func finishesWithStatusOneWhenAProcessWithRestartNeverFailed() {
        var machine = SupervisorStateMachine(
            topology: Self.topology([Self.process("one", .consumer, restart: .never)]))
        _ = machine.start(at: .zero)
        _ = machine.childStarted("one", pid: 1, at: .zero)
        _ = machine.childExited("one", pid: 1, status: .exited(3), at: .seconds(1))
        #expect(machine.state(of: "one") == .done(.failed))
        #expect(machine.exitStatus == 1)
    }

    @Test func shutsEverythingDownWithStatusOneWhenTheBrokerIsGivenUp() {
        let limits = RestartLimits(
            initialDelay: .seconds(1), maxDelay: .seconds(1), maxRestarts: 0, window: .seconds(60))
        var machine = SupervisorStateMachine(topology: Self.topology(Self.fanOut, limits: limits))
        var pending = Self.starts(machine.start(at: .zero))
        var pid: Int32 = 100
        while !pending.isEmpty {
            pending += Self.starts(machine.childStarted(pending.removeFirst(), pid: pid, at: .zero))
            pid += 1
        }
        // broker 100, left 101, listen 102, ingest 103
        let actions = machine.childExited("broker", pid: 100, status: .signaled(.kill), at: .seconds(1))
        #expect(Self.reports(actions).contains(.gaveUp(name: "broker", restarts: 0, window: .seconds(60))))
        #expect(Self.reports(actions).contains(.shuttingDown(reason: .brokerStopped(name: "broker"))))
        #expect(Self.signals(actions) == ["ingest SIGTERM"])
        _ = machine.childExited("ingest", pid: 103, status: .exited(0), at: .seconds(2))
        _ = machine.childExited("left", pid: 101, status: .exited(0), at: .seconds(2))
        let last = machine.childExited("listen", pid: 102, status: .exited(0), at: .seconds(2))
        #expect(machine.exitStatus == 1)
        #expect(Self.reports(last).last == .finished(exitStatus: 1))
    }

    @Test func drainsIngestThenWorkersThenConsumersThenTheBrokerEachAfterThePreviousExited() {
        var machine = Self.runningFanOut()
        // broker 100, left 101, listen 102, ingest 103
        let first = machine.shutdownRequested(signal: .terminate, at: .seconds(10))
        #expect(Self.reports(first).first == .shuttingDown(reason: .requested(.terminate)))
        #expect(Self.signals(first) == ["ingest SIGTERM"])
        #expect(machine.nextDeadline == .seconds(15))
        #expect(
            Self.signals(machine.childExited("ingest", pid: 103, status: .exited(0), at: .seconds(11))) == [
                "left SIGTERM"
            ])
        #expect(machine.nextDeadline == .seconds(16))
        #expect(
            Self.signals(machine.childExited("left", pid: 101, status: .exited(0), at: .seconds(12))) == [
                "listen SIGTERM"
            ])
        #expect(
            Self.signals(machine.childExited("listen", pid: 102, status: .exited(0), at: .seconds(13))) == [
                "broker SIGTERM"
            ])
        let last = machine.childExited("broker", pid: 100, status: .exited(0), at: .seconds(14))
        #expect(Self.reports(last).last == .finished(exitStatus: 0))
        #expect(machine.exitStatus == 0)
        for name in ["ingest", "left", "listen", "broker"] {
            #expect(machine.state(of: name) == .done(.shutDown))
        }
    }

    @Test func sendsSigkillToAStageStillRunningAtTheDeadlineAndDoesNotRestartIt() {
        var machine = Self.runningFanOut(deadline: .seconds(2))
        _ = machine.shutdownRequested(at: .seconds(10))
        #expect(Self.starts(machine.timerFired(at: .milliseconds(11_999))) == [])
        let kill = machine.timerFired(at: .seconds(12))
        #expect(Self.signals(kill) == ["ingest SIGKILL"])
        #expect(Self.reports(kill).first == .killing(name: "ingest", pid: 103, deadline: .seconds(2)))
        #expect(machine.nextDeadline == nil)
        let next = machine.childExited("ingest", pid: 103, status: .signaled(.kill), at: .seconds(12))
        #expect(Self.starts(next) == [])
        #expect(Self.signals(next) == ["left SIGTERM"])
        #expect(machine.nextDeadline == .seconds(14))
    }

    @Test func aSecondShutdownRequestKillsEveryRemainingProcessAtOnce() {
        var machine = Self.runningFanOut()
        _ = machine.shutdownRequested(at: .seconds(1))
        let forced = machine.shutdownRequested(at: .seconds(2))
        #expect(Self.reports(forced).first == .forcingShutdown)
        #expect(
            Set(Self.signals(forced)) == [
                "ingest SIGKILL", "left SIGKILL", "listen SIGKILL", "broker SIGKILL",
            ])
        for (name, pid) in [("ingest", 103), ("left", 101), ("listen", 102)] {
            #expect(
                Self.signals(
                    machine.childExited(name, pid: Int32(pid), status: .signaled(.kill), at: .seconds(2)))
                    == [])
        }
        _ = machine.childExited("broker", pid: 100, status: .signaled(.kill), at: .seconds(2))
        #expect(machine.exitStatus == 0)
    }

    @Test func neverStartsWaitingOrBackingOffProcessesOnceTheShutdownBegan() {
        var machine = SupervisorStateMachine(topology: Self.topology(Self.fanOut, settle: .seconds(1)))
        _ = machine.start(at: .zero)
        _ = machine.childStarted("broker", pid: 1, at: .zero)
        let actions = machine.shutdownRequested(at: .milliseconds(500))
        #expect(Self.signals(actions) == ["broker SIGTERM"])
        #expect(Self.starts(machine.timerFired(at: .seconds(2))) == [])
        for name in ["ingest", "left", "listen"] {
            #expect(machine.state(of: name) == .done(.shutDown))
        }
    }

    @Test func stopsAProcessThatReportsItsPidAfterItsStageBegan() {
        var machine = SupervisorStateMachine(topology: Self.topology(Self.fanOut))
        _ = machine.start(at: .zero)
        _ = machine.childStarted("broker", pid: 1, at: .zero)  // starts left and listen
        _ = machine.childStarted("left", pid: 2, at: .zero)
        // listen is still starting when the shutdown begins.
        #expect(Self.signals(machine.shutdownRequested(at: .seconds(1))) == ["left SIGTERM"])
        #expect(Self.signals(machine.childExited("left", pid: 2, status: .exited(0), at: .seconds(1))) == [])
        // The consumer stage waits for listen, then stops it as soon as its pid is known.
        #expect(Self.signals(machine.childStarted("listen", pid: 3, at: .seconds(1))) == ["listen SIGTERM"])
        #expect(
            Self.signals(machine.childExited("listen", pid: 3, status: .exited(0), at: .seconds(1))) == [
                "broker SIGTERM"
            ])
    }

    @Test func retriesAProcessThatCannotBeSpawnedAndGivesUp() {
        let limits = RestartLimits(initialDelay: .zero, maxDelay: .zero, maxRestarts: 2, window: .seconds(60))
        var machine = SupervisorStateMachine(
            topology: Self.topology([Self.process("missing", .consumer)], limits: limits))
        #expect(Self.starts(machine.start(at: .zero)) == ["missing"])
        // A zero delay restarts at once.
        #expect(
            Self.starts(machine.childFailedToStart("missing", reason: "ENOENT", at: .zero)) == ["missing"])
        #expect(
            Self.starts(machine.childFailedToStart("missing", reason: "ENOENT", at: .zero)) == ["missing"])
        let last = machine.childFailedToStart("missing", reason: "ENOENT", at: .zero)
        #expect(Self.reports(last).contains(.gaveUp(name: "missing", restarts: 2, window: .seconds(60))))
        #expect(machine.exitStatus == 1)
    }

    @Test func exitsOneAfterAGracefulShutdownWhenAProcessHadBeenGivenUp() {
        let limits = RestartLimits(
            initialDelay: .seconds(1), maxDelay: .seconds(1), maxRestarts: 0, window: .seconds(60))
        var machine = SupervisorStateMachine(
            topology: Self.topology(
                [Self.process("broker", .broker), Self.process("left", .worker)], limits: limits))
        _ = machine.start(at: .zero)
        _ = machine.childStarted("broker", pid: 1, at: .zero)
        _ = machine.childStarted("left", pid: 2, at: .zero)
        _ = machine.childExited("left", pid: 2, status: .exited(1), at: .seconds(1))
        #expect(Self.signals(machine.shutdownRequested(at: .seconds(2))) == ["broker SIGTERM"])
        _ = machine.childExited("broker", pid: 1, status: .exited(0), at: .seconds(2))
        #expect(machine.exitStatus == 1)
    }

    @Test func neverRestartsAUsageErrorWhateverThePolicy() {
        let processes = [Self.process("broker", .broker), Self.process("typo", .worker, restart: .always)]
        var machine = SupervisorStateMachine(topology: Self.topology(processes))
        _ = machine.start(at: .zero)
        _ = machine.childStarted("broker", pid: 1, at: .zero)
        _ = machine.childStarted("typo", pid: 2, at: .zero)
        let actions = machine.childExited("typo", pid: 2, status: .exited(64), at: .seconds(1))
        #expect(Self.reports(actions).last == .usageError(name: "typo"))
        #expect(machine.state(of: "typo") == .done(.failed))
        #expect(machine.nextDeadline == nil)
        _ = machine.shutdownRequested(at: .seconds(2))
        _ = machine.childExited("broker", pid: 1, status: .exited(0), at: .seconds(2))
        #expect(machine.exitStatus == 1)
    }

    @Test func ignoresTheExitOfAnEarlierIncarnation() {
        var machine = Self.runningFanOut()
        #expect(machine.childExited("left", pid: 9999, status: .exited(1), at: .seconds(1)) == [])
        #expect(machine.state(of: "left") == .running(pid: 101, since: .zero))
    }
}

struct SupervisorBackoffTests {
    @Test func doublesTheDelayUpToTheMaximumAndGivesUpPastTheLimit() {
        var backoff = Backoff(
            limits: RestartLimits(
                initialDelay: .milliseconds(200), maxDelay: .seconds(1), maxRestarts: 5, window: .seconds(60))
        )
        var decisions: [Backoff.Decision] = []
        for second in 0..<6 {
            decisions.append(backoff.nextRestart(at: .seconds(second)))
        }
        #expect(
            decisions == [
                .restart(after: .milliseconds(200), number: 1),
                .restart(after: .milliseconds(400), number: 2),
                .restart(after: .milliseconds(800), number: 3), .restart(after: .seconds(1), number: 4),
                .restart(after: .seconds(1), number: 5), .giveUp(restarts: 5),
            ])
    }

    @Test func forgetsRestartsOlderThanTheWindow() {
        var backoff = Backoff(
            limits: RestartLimits(
                initialDelay: .seconds(1), maxDelay: .seconds(8), maxRestarts: 2, window: .seconds(10)))
        #expect(backoff.nextRestart(at: .seconds(0)) == .restart(after: .seconds(1), number: 1))
        #expect(backoff.nextRestart(at: .seconds(5)) == .restart(after: .seconds(2), number: 2))
        #expect(backoff.nextRestart(at: .seconds(9)) == .giveUp(restarts: 2))
        // At 10 s the first restart leaves the window.
        #expect(backoff.nextRestart(at: .seconds(10)) == .restart(after: .seconds(2), number: 2))
        #expect(backoff.restartTimes == [.seconds(5), .seconds(10)])
    }

    @Test func neverOverflowsWithManyRestartsInTheWindow() {
        let backoff = Backoff(
            limits: RestartLimits(
                initialDelay: .seconds(1), maxDelay: .seconds(5), maxRestarts: 10_000, window: .seconds(60)))
        #expect(backoff.delay(forRestartsInWindow: 9_999) == .seconds(5))
    }

    @Test func describesDelaysToTheMillisecond() {
        #expect(SupervisorEvent.seconds(.milliseconds(400)) == "0.4 s")
        #expect(SupervisorEvent.seconds(.milliseconds(1250)) == "1.25 s")
        #expect(SupervisorEvent.seconds(.seconds(60)) == "60 s")
        #expect(SupervisorEvent.seconds(.milliseconds(5)) == "0.005 s")
    }
}
