import KinesiaSystem
import Testing

@testable import KinesiaWorker

/// A pool worker's room, measured from what its sessions cost: the ceiling until a cost is
/// known, then as many sessions as fit in 80 % of the box's processors, never more than the
/// ceiling and never fewer than it hosts.
struct CapacityEstimateTests {
    @Test func theCeilingStandsUntilACostIsMeasuredOverAnIntervalOfTheSameSessions() {
        var estimate = CapacityEstimate(ceiling: 16, processors: 2)
        #expect(estimate.capacity(sessions: 0) == 16)
        estimate.add(ProcessorUsage(processSeconds: 1), at: .seconds(1), sessions: 0)
        estimate.add(ProcessorUsage(processSeconds: 1.01), at: .seconds(2), sessions: 0)
        #expect(estimate.capacity(sessions: 0) == 16)
        // Sessions started within the interval: not a cost of 4.
        estimate.add(ProcessorUsage(processSeconds: 1.25), at: .seconds(3), sessions: 4)
        #expect(estimate.costPerSession == nil)
        // 4 sessions for 1 s: 0.25 processor, 1/16 each; 1.6 processors fit 25: the ceiling.
        estimate.add(ProcessorUsage(processSeconds: 1.5), at: .seconds(4), sessions: 4)
        #expect(estimate.costPerSession == 0.0625)
        #expect(estimate.capacity(sessions: 4) == 16)
    }

    @Test func expensiveSessionsLeaveLessRoomThanTheCeilingButNeverLessThanTheyAre() {
        var estimate = CapacityEstimate(ceiling: 16, processors: 2)
        estimate.add(ProcessorUsage(processSeconds: 0), at: .zero, sessions: 4)
        // 0.3 processor per session: 1.6 / 0.3 = 5 sessions.
        estimate.add(ProcessorUsage(processSeconds: 1.2), at: .seconds(1), sessions: 4)
        #expect(estimate.capacity(sessions: 4) == 5)
        // Already 8 (placed before the cost was known): no room, and no shedding.
        #expect(estimate.capacity(sessions: 8) == 8)
    }

    @Test func theCostIsSmoothedAndShortIntervalsArePassedOver() {
        var estimate = CapacityEstimate(ceiling: 64, processors: 2)
        estimate.add(ProcessorUsage(processSeconds: 0), at: .zero, sessions: 2)
        estimate.add(ProcessorUsage(processSeconds: 0.2), at: .seconds(1), sessions: 2)
        #expect(estimate.costPerSession == 0.1)
        // 100 ms later: too short to measure.
        estimate.add(ProcessorUsage(processSeconds: 0.5), at: .milliseconds(1_100), sessions: 2)
        #expect(estimate.costPerSession == 0.1)
        // A burst at 0.4 each moves the average by a third of the difference.
        estimate.add(ProcessorUsage(processSeconds: 1.0), at: .seconds(2), sessions: 2)
        #expect(abs(estimate.costPerSession! - 0.2) < 1e-9)
        #expect(estimate.capacity(sessions: 2) == 8)
    }

    @Test func theProcessesOwnSampleGrowsWithWork() {
        let before = ProcessorUsage.sample()
        var sum = 0.0
        for index in 0..<2_000_000 { sum += Double(index).squareRoot() }
        let after = ProcessorUsage.sample()
        #expect(sum > 0)
        #expect(after.processSeconds > before.processSeconds)
        #expect(ProcessorUsage.onlineProcessors >= 1)
    }
}
