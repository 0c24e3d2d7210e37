import Foundation
import Glibc
import Testing

@testable import KinesiaSystem

/// ``ChildProcess``, the one owner of a child: its waits, its stop, and its signals after the
/// end, with real processes.
@Suite(.serialized)
struct ChildProcessTests {
    private func shell(_ script: String) -> ProcessSpawn {
        ProcessSpawn(
            executable: "/bin/sh", arguments: ["sh", "-c", script], environment: ["PATH=/usr/bin:/bin"])
    }

    @Test func theExitStatusIsWhatTheChildEndedWithAndWaitsReturnIt() throws {
        let child = try ChildProcess(shell("exit 3"))
        #expect(child.pid != nil)
        #expect(child.waitForExit() == .exited(3))
        #expect(child.status == .exited(3))
        // Reaped: a later wait returns at once, and nothing is signalled any more.
        #expect(child.waitForExit(timeout: .zero) == .exited(3))
        #expect(!child.send(.terminate))
    }

    @Test func aWaitWithATimeoutReturnsNilWhileTheChildRuns() throws {
        let child = try ChildProcess(shell("sleep 30"))
        let clock = ContinuousClock()
        let started = clock.now
        #expect(child.waitForExit(timeout: .milliseconds(200)) == nil)
        #expect(clock.now - started >= .milliseconds(200))
        #expect(child.status == nil)
        #expect(child.send(.kill))
        #expect(child.waitForExit() == .signaled(.kill))
    }

    @Test func stopTerminatesAndKillsAChildThatIgnoresTheTerminationAfterTheGrace() throws {
        // A child that ends on SIGTERM ends with it.
        let polite = try ChildProcess(shell("sleep 30"))
        #expect(polite.stop(grace: .seconds(5)) == .signaled(.terminate))
        // One that ignores SIGTERM is killed once the grace is over, never waited for for good.
        let stubborn = try ChildProcess(shell("trap '' TERM; echo ready; while :; do sleep 0.05; done"))
        Thread.sleep(forTimeInterval: 0.3)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(stubborn.stop(grace: .milliseconds(300)) == .signaled(.kill))
        #expect(clock.now - started >= .milliseconds(300))
        #expect(clock.now - started < .seconds(10))
    }

    @Test func aChildThatCannotBeSpawnedIsAnErrorAndLeavesNothingToWaitFor() {
        #expect(throws: ProcessSpawn.Failure.self) {
            try ChildProcess(
                ProcessSpawn(executable: "/nonexistent/kinesia-nothing", arguments: ["x"], environment: []))
        }
    }

    @Test func launchReportsTheSpawnThenTheExitFromTheChildsThread() throws {
        let events = EventLog()
        let child = ChildProcess.launch(
            ChildProcess.Launch(executable: "/bin/sh", arguments: ["sh", "-c", "exit 4"], environment: []),
            name: "test"
        ) { events.append($0) }
        #expect(child.waitForExit(timeout: .seconds(10)) == .exited(4))
        let deadline = Date().addingTimeInterval(5)
        while events.all.count < 2, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let all = events.all
        #expect(all.count == 2)
        guard all.count == 2, case .spawned(let pid) = all[0] else {
            Issue.record("events: \(all)")
            return
        }
        #expect(all[1] == .exited(pid: pid, status: .exited(4)))
    }
}

/// Events collected from the child's thread.
private final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ChildProcess.Event] = []

    func append(_ event: ChildProcess.Event) { lock.withLock { events.append(event) } }
    var all: [ChildProcess.Event] { lock.withLock { events } }
}
