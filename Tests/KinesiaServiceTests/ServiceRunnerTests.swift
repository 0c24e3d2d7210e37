import Foundation
import KinesiaSystem
import Synchronization
import Testing

@testable import KinesiaService

/// How a service is run: its signals injected, its deadline on a manual clock, a forced exit
/// recorded instead of ending the test process.
struct ServiceRunnerTests {
    /// A service made of a closure.
    struct ClosureService<Outcome: Sendable>: Service {
        let body: @Sendable (StopToken) async throws -> Outcome
        func run(until stop: StopToken) async throws -> Outcome { try await body(stop) }
    }

    /// Sleeps on `clock` for an hour; says whether it was cancelled first.
    static func sleepsUntilCancelled(on clock: ManualClock) -> ClosureService<String> {
        ClosureService { _ in
            do {
                try await clock.sleep(until: clock.now.advanced(by: .seconds(3600)))
                return "slept"
            } catch {
                return "cancelled"
            }
        }
    }

    /// Waits until `condition` holds (at most 10 s of real time).
    static func eventually(_ condition: () -> Bool) async {
        for _ in 0..<10_000 where !condition() {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test func theFirstSignalRequestsTheGracefulStopAndTheOutcomeIsReturned() async throws {
        let sink = CapturedText()
        let (signals, send) = AsyncStream<ProcessSignal>.makeStream()
        let service = ClosureService { stop in
            await withCheckedContinuation { continuation in
                stop.whenRequested {
                    continuation.resume(returning: "stopped by \($0.map { "\($0)" } ?? "nothing")")
                }
            }
        }
        let runner = ServiceRunner(logger: Logger(label: "t", sink: sink), clock: ManualClock())
        async let outcome = runner.run(service, signals: signals)
        send.yield(.terminate)
        #expect(try await outcome == "stopped by SIGTERM")
        #expect(sink.lines == ["t: info: SIGTERM: stopping"])
    }

    @Test func aServiceThatEndsByItselfEndsTheRunWithNoSignal() async throws {
        let (signals, _) = AsyncStream<ProcessSignal>.makeStream()
        let runner = ServiceRunner(logger: nil, clock: ManualClock())
        #expect(try await runner.run(ClosureService { _ in 42 }, signals: signals) == 42)
    }

    @Test func theServiceErrorIsThrownToTheCaller() async {
        struct Failed: Error {}
        let (signals, _) = AsyncStream<ProcessSignal>.makeStream()
        let runner = ServiceRunner(logger: nil, clock: ManualClock())
        await #expect(throws: Failed.self) {
            try await runner.run(ClosureService { _ -> Int in throw Failed() }, signals: signals)
        }
    }

    @Test func aServiceStillRunningAtItsDeadlineIsCancelled() async throws {
        let clock = ManualClock()
        let sink = CapturedText()
        let (signals, send) = AsyncStream<ProcessSignal>.makeStream()
        let runner = ServiceRunner(
            logger: Logger(label: "t", sink: sink), stopDeadline: .seconds(10), forcedEnd: .cancelService,
            clock: clock)
        async let outcome = runner.run(Self.sleepsUntilCancelled(on: clock), signals: signals)
        await Self.eventually { clock.sleepers == 1 }
        send.yield(.terminate)
        await Self.eventually { clock.sleepers == 2 }  // the service and the stop's deadline
        #expect(clock.sleepers == 2)
        clock.advance(by: .milliseconds(9_999))
        #expect(clock.sleepers == 2, "nothing is forced before the deadline")
        clock.advance(by: .milliseconds(1))
        #expect(try await outcome == "cancelled")
        #expect(
            sink.lines == [
                "t: info: SIGTERM: stopping",
                "t: warning: the service did not stop within 10 s of the request: exiting",
            ])
    }

    @Test func aBlockingLoopStillRunningAtItsDeadlineEndsTheProcess() async throws {
        let clock = ManualClock()
        let sink = CapturedText()
        let (signals, send) = AsyncStream<ProcessSignal>.makeStream()
        let (exits, exit) = AsyncStream<Int32>.makeStream()
        let beforeExit = Atomic<Int>(0)
        var runner = ServiceRunner(
            logger: Logger(label: "t", sink: sink), stopDeadline: .seconds(5),
            forcedEnd: .exitProcess(beforeExit: { beforeExit.add(1, ordering: .relaxed) }), clock: clock)
        runner.exitProcess = { exit.yield($0) }
        let release = StopToken()
        // Ignores its own token: stuck in a call that does not return, until the test releases it.
        let service = BlockingService(threadName: "test.stuck") { stop in
            while !release.isRequested { Thread.sleep(forTimeInterval: 0.001) }
            return stop.signal
        }
        async let outcome = runner.run(service, signals: signals)
        send.yield(.interrupt)
        await Self.eventually { clock.sleepers == 1 }
        clock.advance(by: .seconds(5))
        var statuses = exits.makeAsyncIterator()
        #expect(await statuses.next() == 1)
        #expect(beforeExit.load(ordering: .relaxed) == 1)
        release.request()
        #expect(try await outcome == .interrupt)
        #expect(
            sink.lines == [
                "t: info: SIGINT: stopping",
                "t: warning: the service did not stop within 5 s of the request: exiting",
            ])
    }

    @Test func aSecondControlCEndsAtOnceButARepeatedSIGTERMDoesNot() async throws {
        let sink = CapturedText()
        let (signals, send) = AsyncStream<ProcessSignal>.makeStream()
        let exits = Mutex<[Int32]>([])
        var runner = ServiceRunner(logger: Logger(label: "t", sink: sink), clock: ManualClock())
        runner.exitProcess = { status in exits.withLock { $0.append(status) } }
        let release = StopToken()
        let service = ClosureService { stop in
            await withCheckedContinuation { continuation in
                release.whenRequested { _ in continuation.resume() }
            }
            return stop.signal
        }
        async let outcome = runner.run(service, signals: signals)
        send.yield(.terminate)
        send.yield(.terminate)
        send.yield(.hangup)
        await Self.eventually { sink.lines.count == 1 }
        try await Task.sleep(for: .milliseconds(20))
        #expect(exits.withLock { $0 }.isEmpty, "a repeated SIGTERM or a SIGHUP is not a second request")
        send.yield(.interrupt)
        await Self.eventually { !exits.withLock { $0 }.isEmpty }
        #expect(exits.withLock { $0 } == [1])
        release.request()
        #expect(try await outcome == .terminate)
        #expect(sink.lines == ["t: info: SIGTERM: stopping", "t: warning: SIGINT again: exiting at once"])
    }

    @Test func withoutADeadlineOnlyASecondControlCCancelsTheService() async throws {
        let clock = ManualClock()
        let (signals, send) = AsyncStream<ProcessSignal>.makeStream()
        let asked = StopToken()
        let service = ClosureService { stop in
            stop.whenRequested { asked.request($0) }
            return try await Self.sleepsUntilCancelled(on: clock).run(until: stop)
        }
        let runner = ServiceRunner(logger: nil, stopDeadline: nil, forcedEnd: .cancelService, clock: clock)
        async let outcome = runner.run(service, signals: signals)
        send.yield(.hangup)
        await Self.eventually { asked.isRequested && clock.sleepers == 1 }
        #expect(asked.signal == .hangup)
        clock.advance(by: .seconds(600))
        #expect(clock.sleepers == 1, "no deadline: the service keeps running")
        send.yield(.interrupt)
        #expect(try await outcome == "cancelled")
    }

    @Test func cancellingTheRunRequestsTheStopAndCancelsTheService() async throws {
        let clock = ManualClock()
        let (signals, _) = AsyncStream<ProcessSignal>.makeStream()
        let service = ClosureService { stop in
            _ = try await Self.sleepsUntilCancelled(on: clock).run(until: stop)
            return stop.isRequested
        }
        let runner = ServiceRunner(logger: nil, clock: clock)
        let run = Task { try await runner.run(service, signals: signals) }
        await Self.eventually { clock.sleepers == 1 }
        run.cancel()
        #expect(try await run.value == true)
    }

    @Test func aBlockingServiceRunsItsLoopUntilTheTokenIsRequested() async throws {
        let (signals, send) = AsyncStream<ProcessSignal>.makeStream()
        let started = StopToken()
        let service = BlockingService { stop in
            started.request()
            var checks = 0
            while !stop.isRequested {
                checks += 1
                Thread.sleep(forTimeInterval: 0.001)
            }
            return checks > 0
        }
        async let outcome = ServiceRunner(logger: nil, clock: ManualClock()).run(service, signals: signals)
        await Self.eventually { started.isRequested }
        send.yield(.terminate)
        #expect(try await outcome == true)
    }
}

/// The stop's request, polled and awaited.
struct StopTokenTests {
    @Test func theFirstRequestIsKeptAndItsHandlersRunOnce() {
        let token = StopToken()
        let calls = Mutex<[ProcessSignal?]>([])
        token.whenRequested { signal in calls.withLock { $0.append(signal) } }
        #expect(!token.isRequested)
        token.request(.terminate)
        token.request(.interrupt)
        #expect(token.isRequested)
        #expect(token.signal == .terminate)
        #expect(calls.withLock { $0 } == [.terminate])
    }

    @Test func aHandlerAddedAfterTheRequestRunsAtOnce() {
        let token = StopToken()
        token.request()
        let calls = Mutex<[ProcessSignal?]>([])
        token.whenRequested { signal in calls.withLock { $0.append(signal) } }
        #expect(calls.withLock { $0 } == [nil])
        #expect(token.signal == nil)
    }
}
