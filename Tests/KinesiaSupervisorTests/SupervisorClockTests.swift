import KinesiaSystem
import KinesiaTestSupport
import Testing

@testable import KinesiaSupervisor

/// The supervisor's back-off timed on a manual clock, with a real child: a restart waits for
/// the supervisor's clock, never for the wall clock, so a minute of back-off takes no time.
@Suite(.timeLimit(.minutes(3)), .tags(.process))
struct SupervisorClockTests {
    typealias Log = SupervisorProcessTests.EventLog

    @Test func aRestartComesWhenTheClockReachesTheBackOffAndNotBefore() async throws {
        let topology = Topology(
            processes: [SupervisorProcessTests.shell("crasher", .consumer, "exit 3")],
            restart: RestartLimits(
                initialDelay: .seconds(20), maxDelay: .seconds(40), maxRestarts: 2, window: .seconds(600)),
            startup: StartupPolicy(settle: .zero))
        let log = Log()
        let clock = ManualClock()
        let supervisor = Supervisor(topology: topology, onEvent: log.append, clock: clock)
        let run = Task { await supervisor.run() }

        func starts() -> Int { log.startedPIDs.count }
        func restartsAnnounced() -> Int {
            log.all.filter { if case .restarting = $0 { true } else { false } }.count
        }
        #expect(await SupervisorProcessTests.eventually { restartsAnnounced() == 1 }, "\(log.all)")
        #expect(starts() == 1)
        // Half a second of wall time, nothing on the supervisor's clock: no restart.
        try await Task.sleep(for: .milliseconds(500))
        #expect(starts() == 1)
        clock.advance(by: .milliseconds(19_999))
        try await Task.sleep(for: .milliseconds(300))
        #expect(starts() == 1, "a millisecond before the 20 s back-off")
        clock.advance(by: .milliseconds(1))
        #expect(await SupervisorProcessTests.eventually { starts() == 2 }, "\(log.all)")
        // The second back-off doubles: 40 s.
        #expect(await SupervisorProcessTests.eventually { restartsAnnounced() == 2 }, "\(log.all)")
        clock.advance(by: .seconds(39))
        try await Task.sleep(for: .milliseconds(300))
        #expect(starts() == 2)
        clock.advance(by: .seconds(1))
        #expect(await SupervisorProcessTests.eventually { starts() == 3 }, "\(log.all)")
        // The third exit is past the limit: given up, and the run ends by itself.
        let status = await run.value
        #expect(status == 1)
        #expect(
            log.all.suffix(2) == [
                .gaveUp(name: "crasher", restarts: 2, window: .seconds(600)), .finished(exitStatus: 1),
            ])
    }
}
