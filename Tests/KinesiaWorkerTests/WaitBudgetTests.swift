import Testing

@testable import KinesiaWorker

/// The waits of a live loop take at most a bounded share of its time.
struct WaitBudgetTests {
    @Test func aFullBudgetGivesTheWaitWantedUpToItsCapacity() {
        var budget = WaitBudget(capacity: .milliseconds(250), share: 0.1)
        #expect(budget.allowance(at: .zero, upTo: .milliseconds(100)) == .milliseconds(100))
        #expect(budget.allowance(at: .zero, upTo: .seconds(1)) == .milliseconds(250))
    }

    /// Waits that come faster than the budget refills get shorter: over a long time, the loop
    /// waits at most its share (a coordinator that never answers, a hole every 100 ms).
    @Test func waitsThatComeOftenTakeAtMostTheShareOfTheTime() {
        var budget = WaitBudget(capacity: .milliseconds(250), share: 0.1)
        var now = Duration.zero
        var waited = Duration.zero
        for _ in 0..<600 {
            let bound = budget.allowance(at: now, upTo: .milliseconds(250))
            budget.spend(bound)  // nothing acknowledged: the whole bound waited
            waited += bound
            now += bound + .milliseconds(100)
        }
        // 600 holes, 60 s of analysis between them: 10 % of the time, plus the first capacity.
        #expect(waited <= .milliseconds(250) + (now * 0.1), "\(waited) of \(now)")
        #expect(waited >= now * 0.09, "the share is given back: \(waited) of \(now)")
    }

    /// Short waits (a coordinator that answers in a millisecond) never run the budget down.
    @Test func shortWaitsLeaveTheBudgetFull() {
        var budget = WaitBudget(capacity: .milliseconds(250), share: 0.1)
        var now = Duration.zero
        for _ in 0..<1000 {
            #expect(budget.allowance(at: now, upTo: .milliseconds(250)) == .milliseconds(250))
            budget.spend(.milliseconds(1))
            now += .milliseconds(20)
        }
    }

    /// Time that goes back (another origin) gives nothing back and takes nothing away.
    @Test func timeThatGoesBackRefillsNothing() {
        var budget = WaitBudget(capacity: .milliseconds(250), share: 0.5)
        _ = budget.allowance(at: .seconds(10), upTo: .zero)
        budget.spend(.milliseconds(250))
        #expect(budget.allowance(at: .seconds(5), upTo: .seconds(1)) == .zero)
        #expect(budget.allowance(at: .seconds(10), upTo: .seconds(1)) == .zero)
        #expect(budget.allowance(at: .milliseconds(10_100), upTo: .seconds(1)) == .milliseconds(50))
    }
}
