import KinesiaService
import KinesiaSystem
import Testing

/// How a service stops: graceful on the first signal, by force at its deadline or on a second
/// Control-C; with no I/O and the time passed in.
struct ServiceShutdownTests {
    @Test func theFirstSignalRequestsTheStopAndStartsTheDeadline() {
        var shutdown = ServiceShutdown(deadline: .seconds(10))
        #expect(shutdown.stopDeadline == nil)
        #expect(shutdown.tick(now: .seconds(100)) == .none)
        #expect(shutdown.received(.terminate, now: .seconds(3)) == .requestStop(.terminate))
        #expect(shutdown.stopDeadline == .seconds(13))
    }

    @Test func aServiceStillRunningAtItsDeadlineEndsTheProcessOnce() {
        var shutdown = ServiceShutdown(deadline: .seconds(10))
        _ = shutdown.received(.interrupt, now: .seconds(1))
        #expect(shutdown.tick(now: .milliseconds(10_999)) == .none)
        guard case .forceExit(let reason) = shutdown.tick(now: .seconds(11)) else {
            Issue.record("no forced exit at the deadline")
            return
        }
        #expect(reason == "the service did not stop within 10 s of the request: exiting")
        #expect(shutdown.tick(now: .seconds(12)) == .none)
        #expect(shutdown.received(.interrupt, now: .seconds(12)) == .none)
    }

    @Test func aSecondControlCEndsAtOnceButRepeatedSIGTERMsCountAsOne() {
        var shutdown = ServiceShutdown()
        #expect(shutdown.deadline == ServiceShutdown.defaultDeadline)
        #expect(shutdown.received(.terminate, now: .zero) == .requestStop(.terminate))
        #expect(shutdown.received(.terminate, now: .seconds(1)) == .none)
        #expect(shutdown.stopDeadline == .seconds(10), "a repeated SIGTERM does not move the deadline")
        #expect(
            shutdown.received(.interrupt, now: .seconds(2)) == .forceExit("SIGINT again: exiting at once"))
    }

    @Test func onceTheServiceReturnedNeitherASignalNorTheDeadlineForcesTheExit() {
        var shutdown = ServiceShutdown(deadline: .seconds(10))
        #expect(shutdown.received(.interrupt, now: .zero) == .requestStop(.interrupt))
        shutdown.serviceReturned()
        #expect(shutdown.received(.interrupt, now: .seconds(1)) == .none)
        #expect(shutdown.tick(now: .seconds(11)) == .none)
        #expect(shutdown.stopDeadline == nil)
    }
}
