import KinesiaSystem
import Testing

/// The manual clock of the timeout tests: it moves only when told, and wakes its sleepers then.
struct ManualClockTests {
    @Test func itMovesOnlyWhenAdvancedAndNeverBackwards() {
        let clock = ManualClock()
        let elapsed = ElapsedClock(clock)
        #expect(elapsed.now == .zero)
        clock.advance(by: .milliseconds(1500))
        #expect(elapsed.now == .milliseconds(1500))
        #expect(elapsed.seconds == 1.5)
        clock.advance(by: .seconds(-5))
        #expect(elapsed.now == .milliseconds(1500))
    }

    @Test func aSleeperWakesWhenAnAdvanceReachesItsDeadlineAndNotBefore() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(2)) }
        while clock.sleepers == 0 { await Task.yield() }
        clock.advance(by: .seconds(1))
        #expect(clock.sleepers == 1, "a second short of its deadline")
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(clock.sleepers == 0)
    }

    @Test func aDeadlineAlreadyPassedDoesNotWait() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(3))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(1)))
    }

    @Test func aCancelledSleeperWakesWithCancellation() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        while clock.sleepers == 0 { await Task.yield() }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleepers == 0)
    }
}

/// ``ElapsedClock``'s sleep is until a deadline fixed when it is computed.
struct ElapsedClockTests {
    @Test func aSleepUntilAnElapsedTimeWakesAtItEvenWhenItStartsLate() async throws {
        let clock = ManualClock()
        let elapsed = ElapsedClock(clock)
        let deadline = elapsed.now + .seconds(40)
        // The clock moves on before the sleeping task starts: the deadline does not move.
        clock.advance(by: .seconds(39))
        let sleeper = Task { try await elapsed.sleep(until: deadline) }
        while clock.sleepers == 0 { await Task.yield() }
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(elapsed.now == .seconds(40))
    }
}
