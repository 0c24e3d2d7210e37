import Foundation
import Glibc
import KinesiaSystem
import KinesiaTestSupport
import Synchronization
import Testing

@testable import KinesiaSupervisor

/// The supervisor with real processes: `/bin/sh` scripts as the executable override.
@Suite(.timeLimit(.minutes(3)), .tags(.process))
struct SupervisorProcessTests {
    /// Collects the supervisor's events as they happen.
    final class EventLog: Sendable {
        private let events = Mutex<[SupervisorEvent]>([])

        func append(_ event: SupervisorEvent) {
            events.withLock { $0.append(event) }
        }

        var all: [SupervisorEvent] { events.withLock { $0 } }

        var startedPIDs: [Int32] {
            all.compactMap { if case .started(_, let pid) = $0 { pid } else { nil } }
        }

        func index(of event: SupervisorEvent) -> Int? {
            all.firstIndex(of: event)
        }
    }

    /// A private directory for one test's files.
    typealias Scratch = ScratchDirectory

    static func shell(
        _ name: String, _ role: ProcessRole, _ script: String, restart: RestartPolicy = .onFailure
    ) -> ProcessSpec {
        ProcessSpec(name: name, command: ["-c", script], executable: "/bin/sh", restart: restart, role: role)
    }

    /// Waits (sleeping, up to `timeout`) until `condition` holds.
    static func eventually(
        timeout: Duration = .seconds(30), _ condition: () -> Bool
    ) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while clock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// Whether no process has `pid` any more (reaped: `kill` fails with ESRCH).
    static func isGone(_ pid: Int32) -> Bool {
        kill(pid, 0) == -1 && errno == ESRCH
    }

    /// Gone, or a zombie waiting for init to reap it (an orphaned grandchild).
    static func isGoneOrZombie(_ pid: Int32) -> Bool {
        if isGone(pid) { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// A script that records its stop in `log` and exits 0 on SIGTERM; it runs a `sleep` in the
    /// background (its pid in `NAME.sleep`, written once the trap is set and the `sleep` runs) to
    /// prove that the whole process group stops.
    ///
    /// The pid is written only once the background child has become `sleep`: until its exec, the
    /// forked shell still has the trap's handler, which takes a SIGTERM and loses it at the exec
    /// (a loaded machine that had not run the child yet left a `sleep` the group's SIGTERM had
    /// reached, 3 times in 45 runs).
    static func drainingScript(_ name: String, log: String, scratch: Scratch) -> String {
        """
        trap 'echo \(name) >> \(log); exit 0' TERM
        sleep 60 &
        child=$!
        while [ "$(cat /proc/$child/comm 2>/dev/null)" != sleep ]; do :; done
        echo $child > \(scratch.path("\(name).sleep"))
        wait
        """
    }

    /// The waits between restarts are measured, not only the delays the supervisor reports: the
    /// child appends the monotonic clock (`/proc/uptime`, since boot) at each start. Only lower
    /// bounds are tight (a restart can come late on a loaded machine, never early).
    @Test func restartsAnExitingChildWithGrowingDelaysAndGivesUpAfterTheLimit() async throws {
        let scratch = try Scratch()
        let starts = scratch.path("starts")
        let topology = Topology(
            processes: [
                Self.shell("crasher", .consumer, "cut -d' ' -f1 /proc/uptime >> '\(starts)'; exit 3")
            ],
            restart: RestartLimits(
                initialDelay: .milliseconds(250), maxDelay: .seconds(1), maxRestarts: 3,
                window: .seconds(60)))
        let log = EventLog()
        let supervisor = Supervisor(topology: topology, onEvent: log.append)
        let status = await supervisor.run()

        #expect(status == 1)
        let events = log.all
        #expect(log.startedPIDs.count == 4)
        let exits = events.filter { if case .exited(_, _, .exited(3)) = $0 { true } else { false } }
        #expect(exits.count == 4)
        let delays = events.compactMap {
            if case .restarting(_, let delay, _, _, _) = $0 { delay } else { nil }
        }
        let expectedDelays: [Duration] = [.milliseconds(250), .milliseconds(500), .seconds(1)]
        #expect(delays == expectedDelays)
        // The time that really passed between one start and the next.
        let times = scratch.lines("starts").compactMap(Double.init)
        #expect(times.count == 4, "\(scratch.lines("starts"))")
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        for (gap, delay) in zip(gaps, expectedDelays) {
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18
            // 0.01 s: the resolution of /proc/uptime.
            #expect(gap >= seconds - 0.01, "restarted after \(gap) s, not \(delay): \(gaps)")
            // An upper bound only against a hang: a child's start took 16 s once on a 2-core
            // machine at load 15, and 35.8 s in a test run that stalled as a whole (the lower
            // bound and the delays asked for are the check).
            #expect(gap < seconds + 120, "restarted after \(gap) s for a delay of \(delay): \(gaps)")
        }
        #expect(
            events.suffix(2) == [
                .gaveUp(name: "crasher", restarts: 3, window: .seconds(60)), .finished(exitStatus: 1),
            ])
        for pid in log.startedPIDs {
            #expect(Self.isGone(pid), "pid \(pid) is still there")
        }
    }

    @Test func stopsEveryChildInDrainOrderOnAShutdownRequestAndLeavesNoProcessBehind() async throws {
        let scratch = try Scratch()
        let stops = scratch.path("stops")
        let names: [(String, ProcessRole)] = [
            ("broker", .broker), ("worker", .worker), ("listen", .consumer), ("ingest", .ingest),
        ]
        let topology = Topology(
            processes: names.map {
                Self.shell($0.0, $0.1, Self.drainingScript($0.0, log: stops, scratch: scratch))
            },
            shutdown: ShutdownPolicy(deadline: .seconds(5)), startup: StartupPolicy(settle: .zero))
        let log = EventLog()
        let supervisor = Supervisor(topology: topology, onEvent: log.append)

        let status = await withTaskGroup(of: Int32.self) { group in
            group.addTask { await supervisor.run() }
            let ready = await Self.eventually { names.allSatisfy { scratch.exists("\($0.0).sleep") } }
            #expect(ready, "the scripts did not start: \(log.all)")
            supervisor.requestShutdown(signal: .terminate)
            return await group.next() ?? -1
        }

        #expect(status == 0)
        #expect(scratch.lines("stops") == ["ingest", "worker", "listen", "broker"])
        // Each stage begins only after the previous one has exited.
        let order = ["ingest", "worker", "listen", "broker"]
        var positions: [Int] = []
        for name in order {
            let pid =
                log.all.compactMap { event -> Int32? in
                    if case .started(name, let pid) = event { pid } else { nil }
                }.first ?? 0
            positions.append(log.index(of: .stopping(name: name, pid: pid, signal: .terminate)) ?? -1)
            positions.append(log.index(of: .exited(name: name, pid: pid, status: .exited(0))) ?? -1)
        }
        #expect(positions == positions.sorted() && !positions.contains(-1), "\(log.all)")
        #expect(log.all.last == .finished(exitStatus: 0))
        #expect(log.startedPIDs.count == 4)
        for pid in log.startedPIDs {
            #expect(Self.isGone(pid), "child \(pid) is still there")
        }
        // The background sleeps were in their parent's process group: the SIGTERM reached them.
        for (name, _) in names {
            guard let sleep = scratch.lines("\(name).sleep").first.flatMap({ Int32($0) }) else {
                Issue.record("no sleep pid for \(name)")
                continue
            }
            #expect(
                await Self.eventually { Self.isGoneOrZombie(sleep) },
                "the sleep of \(name) survived: \((try? String(contentsOfFile: "/proc/\(sleep)/stat", encoding: .utf8)) ?? "")"
            )
        }
    }

    /// One child that ignores SIGTERM (it writes `ready` once its trap is set), and a shutdown
    /// deadline of 300 ms.
    static func stubborn(readyIn scratch: Scratch) -> Topology {
        let script = """
            trap '' TERM
            echo ready > \(scratch.path("ready"))
            while :; do sleep 0.05; done
            """
        return Topology(
            processes: [shell("stubborn", .worker, script)],
            shutdown: ShutdownPolicy(deadline: .milliseconds(300)))
    }

    @Test func killsAChildThatIgnoresSigtermOnceTheDeadlinePassed() async throws {
        let scratch = try Scratch()
        let topology = Self.stubborn(readyIn: scratch)
        let log = EventLog()
        let supervisor = Supervisor(topology: topology, onEvent: log.append)

        let status = await withTaskGroup(of: Int32.self) { group in
            group.addTask { await supervisor.run() }
            #expect(await Self.eventually { scratch.exists("ready") })
            supervisor.requestShutdown()
            return await group.next() ?? -1
        }

        #expect(status == 0)
        let pid = log.startedPIDs.first ?? 0
        #expect(log.all.contains(.stopping(name: "stubborn", pid: pid, signal: .terminate)))
        #expect(log.all.contains(.killing(name: "stubborn", pid: pid, deadline: .milliseconds(300))))
        #expect(log.all.contains(.exited(name: "stubborn", pid: pid, status: .signaled(.kill))))
        #expect(Self.isGone(pid))
    }

    /// Cancelling the task that runs the supervisor is a shutdown request whose deadlines still
    /// come: a child that ignores SIGTERM is killed once the deadline passed, and the run
    /// returns (the timers of a cancelled task cannot sleep; they wait on the wall clock).
    @Test func aCancelledRunStillKillsAChildThatIgnoresSigtermAtTheDeadline() async throws {
        let scratch = try Scratch()
        let topology = Self.stubborn(readyIn: scratch)
        let log = EventLog()
        let supervisor = Supervisor(topology: topology, onEvent: log.append)
        let run = Task { await supervisor.run() }
        #expect(await Self.eventually { scratch.exists("ready") })
        run.cancel()
        #expect(await run.value == 0)
        let pid = log.startedPIDs.first ?? 0
        #expect(log.all.contains(.killing(name: "stubborn", pid: pid, deadline: .milliseconds(300))))
        #expect(log.all.contains(.exited(name: "stubborn", pid: pid, status: .signaled(.kill))))
        #expect(Self.isGone(pid))
    }

    @Test func reportsAnExecutableThatCannotBeStartedAndGivesUp() async throws {
        let topology = Topology(
            processes: [
                ProcessSpec(
                    name: "ghost", command: [], executable: "/nonexistent/kinesia-ghost", role: .consumer)
            ],
            restart: RestartLimits(
                initialDelay: .milliseconds(10), maxDelay: .milliseconds(10), maxRestarts: 1,
                window: .seconds(60)))
        let log = EventLog()
        let status = await Supervisor(topology: topology, onEvent: log.append).run()
        #expect(status == 1)
        #expect(
            log.all.first
                == .failedToStart(
                    name: "ghost", reason: "cannot run /nonexistent/kinesia-ghost: No such file or directory")
        )
        #expect(log.all.contains(.gaveUp(name: "ghost", restarts: 1, window: .seconds(60))))
    }

    @Test func givesEveryChildTheBusAndItsNameInTheEnvironment() async throws {
        let scratch = try Scratch()
        let topology = Topology(
            bus: scratch.path("bus"),
            processes: [
                Self.shell(
                    "env", .consumer,
                    "echo \"$KINESIA_BUS $KINESIA_PROCESS_NAME $0\" > \(scratch.path("env"))",
                    restart: .never)
            ])
        let status = await Supervisor(topology: topology, onEvent: { _ in }).run()
        #expect(status == 0)
        #expect(scratch.lines("env") == ["\(scratch.path("bus")) env /bin/sh"])
    }
}

/// ``ChildProcess``: what a child gets from `posix_spawn`.
@Suite(.timeLimit(.minutes(3)), .tags(.process))
struct SupervisorChildProcessTests {
    /// Launches `/bin/sh -c script` and returns the handle and its events.
    static func launch(_ script: String) -> (ChildProcess, Mailbox<ChildProcess.Event>) {
        let events = Mailbox<ChildProcess.Event>()
        let launch = ChildProcess.Launch(
            executable: "/bin/sh", arguments: ["/bin/sh", "-c", script], environment: ["PATH=/usr/bin:/bin"])
        return (ChildProcess.launch(launch, name: "test", onEvent: events.post), events)
    }

    @Test func aChildGetsDefaultDispositionsForSignalsTheParentIgnores() async throws {
        let scratch = try SupervisorProcessTests.Scratch()
        // Ignored dispositions survive exec: without POSIX_SPAWN_SETSIGDEF the child would
        // ignore SIGVTALRM too (and a non-interactive sh cannot undo that). SIGVTALRM: no other
        // test uses it, and its default action ends the process.
        let previous = signal(SIGVTALRM, SIG_IGN)
        defer { signal(SIGVTALRM, previous) }
        let (child, events) = Self.launch(
            "echo ready > \(scratch.path("ready")); while :; do sleep 0.05; done")
        guard case .spawned(let pid) = await events.next() else {
            Issue.record("not spawned")
            return
        }
        #expect(await SupervisorProcessTests.eventually { scratch.exists("ready") })
        #expect(child.send(ProcessSignal(rawValue: SIGVTALRM)))
        let end = await withTaskGroup(of: ChildProcess.Event?.self) { group in
            group.addTask { await events.next() }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                child.send(.kill)  // still running: the signal was ignored
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? nil
        }
        #expect(end == .exited(pid: pid, status: .signaled(ProcessSignal(rawValue: SIGVTALRM))))
        #expect(!child.send(.terminate))  // reaped: never signalled again
    }

    @Test func aChildReadsDevNullAndInheritsNoDescriptorOfTheParent() async throws {
        let scratch = try SupervisorProcessTests.Scratch()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)  // not close-on-exec
        defer {
            close(fds[0])
            close(fds[1])
        }
        let (_, events) = Self.launch(
            """
            readlink /proc/$$/fd/0 > \(scratch.path("stdin"))
            if [ -e /proc/$$/fd/\(fds[1]) ]; then echo open; else echo closed; fi > \(scratch.path("pipe"))
            """)
        guard case .spawned(let pid) = await events.next() else {
            Issue.record("not spawned")
            return
        }
        #expect(await events.next() == .exited(pid: pid, status: .exited(0)))
        #expect(scratch.lines("stdin") == ["/dev/null"])
        #expect(scratch.lines("pipe") == ["closed"])
    }

    @Test func aChildLeadsItsOwnProcessGroup() async throws {
        let scratch = try SupervisorProcessTests.Scratch()
        let (_, events) = Self.launch("ps -o pgid= -p $$ | tr -d ' ' > \(scratch.path("pgid"))")
        guard case .spawned(let pid) = await events.next() else {
            Issue.record("not spawned")
            return
        }
        #expect(await events.next() == .exited(pid: pid, status: .exited(0)))
        #expect(scratch.lines("pgid") == ["\(pid)"])
    }
}

/// ``SignalStream`` with real signals sent to the test process (SIGUSR1, which nothing else in
/// the tests uses).
struct SignalStreamTests {
    /// The handler bits: 0 is SIG_DFL, 1 is SIG_IGN, anything else a handler.
    static func disposition(_ signal: Int32) -> Int {
        var current = sigaction()
        sigaction(signal, nil, &current)
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
    }

    /// Watches SIGUSR1, sends it to this process and returns what the stream delivered.
    static func receiveOne() async -> ProcessSignal? {
        let signals = SignalStream([.user1])
        #expect(disposition(SIGUSR1) > 1)  // caught: sending it now cannot end the process
        return await withTaskGroup(of: ProcessSignal?.self) { group in
            group.addTask {
                for await signal in signals { return signal }
                return nil
            }
            kill(getpid(), SIGUSR1)
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func deliversARealSignalAndRestoresTheDefaultAfterEachStream() async {
        #expect(Self.disposition(SIGUSR1) == 0)  // SIG_DFL: the signal would end the process
        for _ in 0..<20 {
            // A signal sent right after init is delivered, every time, to every new stream.
            #expect(await Self.receiveOne() == .user1)
            #expect(Self.disposition(SIGUSR1) == 0)
        }
    }

    private typealias TgkillFunction = @convention(c) (pid_t, pid_t, Int32) -> Int32

    /// `tgkill` (a GNU declaration Swift does not see): a signal for one thread.
    private static let tgkill: TgkillFunction? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "tgkill") else { return nil }
        return unsafeBitCast(symbol, to: TgkillFunction.self)
    }()

    /// The thread of this process that reads the signal pipe (`kinesia-signals`), once it runs.
    static func readingThread() async -> pid_t? {
        for _ in 0..<1000 {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            for task in tasks {
                let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                if name == "kinesia-signals\n" { return pid_t(task) }
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Whether the thread `tid` of this process blocks `signal` (`SigBlk` in its status).
    static func blocks(_ signal: Int32, thread tid: pid_t) -> Bool? {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
            let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return nil }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// Every thread of a test process but the main one blocks nearly every signal (they are
    /// libdispatch's workers, or threads they started), the thread reading the signal pipe
    /// included, as it inherits its creator's mask; a signal sent to that thread alone is
    /// delivered all the same, and blocked there again once nobody watches it.
    @Test(.timeLimit(.minutes(3)))
    func aSignalForTheReadingThreadAloneIsDeliveredWhateverTheMaskItInherited() async throws {
        // SIGURG is ignored by default: a stray one cannot end the test process.
        let urgent = ProcessSignal(rawValue: SIGURG)
        let tgkill = try #require(Self.tgkill)
        do {
            let signals = SignalStream([urgent])
            let reader = try #require(await Self.readingThread())
            #expect(tgkill(getpid(), reader, SIGURG) == 0)
            var iterator = signals.makeAsyncIterator()
            #expect(await iterator.next() == urgent)
        }
        let reader = try #require(await Self.readingThread())
        // This thread's mask: a libdispatch worker's, like the one the reading thread inherited.
        var mask = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &mask)
        let blockedHere = sigismember(&mask, SIGURG) == 1
        var blockedAgain = false
        for _ in 0..<1000 where !blockedAgain {
            blockedAgain = Self.blocks(SIGURG, thread: reader) == blockedHere
            if !blockedAgain { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(blockedAgain, "the reading thread's mask for SIGURG is not its creator's again")
    }

    @Test(.timeLimit(.minutes(3)))
    func deliversEachSignalToEveryStreamThatWatchesIt() async {
        let first = SignalStream([.user2])
        let second = SignalStream([.user2, .hangup])
        kill(getpid(), SIGUSR2)
        var firstIterator = first.makeAsyncIterator()
        var secondIterator = second.makeAsyncIterator()
        #expect(await firstIterator.next() == .user2)
        #expect(await secondIterator.next() == .user2)
    }
}
