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
        let ended = Mutex<(done: Bool, status: TerminationStatus?)>((false, nil))
        let waiter = Thread {
            let status = child.waitForExit(timeout: .seconds(5), clock: clock)
            ended.withLock { $0 = (true, status) }
        }
        waiter.start()
        func untilRead(_ count: Int) {
            let deadline = Date().addingTimeInterval(10)
            while clock.reads < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        }
        untilRead(2)  // the wait has fixed its deadline (its clock's origin, then its start)
        clock.base.advance(by: .milliseconds(4_999))
        let read = clock.reads
        untilRead(read + 2)  // read again since the advance
        #expect(!ended.withLock { $0.done }, "still waiting a millisecond before the limit")
        clock.base.advance(by: .milliseconds(1))
        let deadline = Date().addingTimeInterval(10)
        while !ended.withLock({ $0.done }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(ended.withLock { $0.done }, "the wait ends once the manual clock reaches the limit")
        #expect(ended.withLock { $0.status } == nil, "the child still runs")
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
        let ended = Mutex<(done: Bool, status: TerminationStatus?)>((false, nil))
        let stopper = Thread {
            let status = child.stop(grace: .seconds(2), clock: clock)
            ended.withLock { $0 = (true, status) }
        }
        stopper.start()
        #expect(clock.waitForReads(2), "the grace has started (its clock's origin, then its start)")
        clock.base.advance(by: .milliseconds(1_999))
        #expect(clock.waitForReads(clock.reads + 2), "read again since the advance")
        #expect(!ended.withLock { $0.done }, "a millisecond before the grace is over: still waiting")
        #expect(child.status == nil, "the SIGTERM was ignored: the child runs")
        clock.base.advance(by: .milliseconds(1))
        let deadline = Date().addingTimeInterval(10)
        while !ended.withLock({ $0.done }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(ended.withLock { $0.done }, "the grace is over on the clock given")
        #expect(ended.withLock { $0.status } == .signaled(.kill))
    }
}
