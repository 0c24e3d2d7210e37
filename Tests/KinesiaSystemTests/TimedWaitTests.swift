import Foundation
import KinesiaTestSupport
import Synchronization
import Testing

@testable import KinesiaSystem

/// A wait with a time limit: the rule with the time passed in, and a child's exit waited for,
/// and its grace before a SIGKILL, on a manual clock.
@Suite(.serialized)
struct TimedWaitTests {
    @Test func theTimeLeftShrinksToTheDeadlineWhereTheWaitIsOver() {
        let wait = TimedWait(limit: .seconds(5), startedAt: .seconds(2))
        #expect(wait.deadline == .seconds(7))
        #expect(wait.remaining(at: .seconds(2)) == .seconds(5))
        #expect(wait.remaining(at: .milliseconds(6_999)) == .milliseconds(1))
        #expect(wait.remaining(at: .seconds(7)) == nil)
        #expect(wait.remaining(at: .seconds(100)) == nil)
        #expect(TimedWait(limit: .seconds(-1), startedAt: .zero).remaining(at: .zero) == nil)
    }

    @Test func aChildsExitIsWaitedForOnTheClockGivenNotTheSystemsClock() throws {
        let child = try ChildProcess(
            ProcessSpawn(
                executable: "/bin/sh", arguments: ["sh", "-c", "sleep 30"],
                environment: ["PATH=/usr/bin:/bin"]))
        defer {
            child.send(.kill)
            child.waitForExit()
        }
        let clock = ReadCountingClock()
        let probe = clock.probe(limit: .seconds(5)) { child.waitForExit(timeout: .seconds(5), clock: clock) }
        #expect(probe.waitingJustBefore, "still waiting a millisecond before the limit")
        #expect(probe.result != nil, "the wait ends once the manual clock reaches the limit")
        #expect(probe.result ?? nil == nil, "the child still runs")
        #expect(child.status == nil)
    }

    @Test func aStoppedChildIsKilledWhenTheClockGivenReachesTheGraceNotBefore() throws {
        let scratch = try ScratchDirectory("timed-stop")
        let ready = scratch.path("ready")
        // Ignores SIGTERM (its sleeps too: an ignored signal stays ignored across exec).
        let child = try ChildProcess(
            ProcessSpawn(
                executable: "/bin/sh",
                arguments: ["sh", "-c", "trap '' TERM; touch '\(ready)'; while :; do sleep 0.05; done"],
                environment: ["PATH=/usr/bin:/bin"]))
        defer {
            child.send(.kill)
            child.waitForExit()
        }
        let started = Date()
        while !FileManager.default.fileExists(atPath: ready), Date().timeIntervalSince(started) < 10 {
            Thread.sleep(forTimeInterval: 0.005)
        }
        try #require(FileManager.default.fileExists(atPath: ready), "the child has set its trap")
        let clock = ReadCountingClock()
        let probe = clock.probe(limit: .seconds(2)) {
            #expect(child.status == nil, "the SIGTERM was ignored: the child runs")
        } _: {
            child.stop(grace: .seconds(2), clock: clock)
        }
        #expect(probe.waitingJustBefore, "a millisecond before the grace is over: still waiting")
        #expect(probe.result != nil, "the grace is over on the clock given")
        #expect(probe.result == .signaled(.kill))
    }
}
