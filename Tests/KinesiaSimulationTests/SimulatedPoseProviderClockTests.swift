import KinesiaMotion
import KinesiaSystem
import Synchronization
import Testing

@testable import KinesiaSimulation

/// A real-time provider paced on the clock it is given: on a manual clock that does not move,
/// the first pose comes at once and the next waits, however long the test runs; moved by the
/// poses' step, the next one comes.
struct SimulatedPoseProviderClockTests {
    static let options = Fixtures.options(seed: 5, reps: 1, dropouts: false, frameRate: 8)

    /// Polls `condition` (a task on another thread is getting there), failing after 10 s.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    @Test func eachPoseIsDueAsLongAfterTheFirstAsItsTimestampIs() {
        var pace = RealTimePace()
        #expect(pace.due(timestamp: 2.5, now: .seconds(7)) == .seconds(7), "the first pose: at once")
        #expect(pace.due(timestamp: 2.625, now: .seconds(7)) == .milliseconds(7125))
        #expect(pace.due(timestamp: 3.5, now: .seconds(9)) == .seconds(8), "late: already due")
    }

    @Test func aRealTimeProviderHandsOutTheNextPoseWhenItsClockReachesItsTime() async throws {
        var expected: [Double] = []
        for await pose in try SimulatedPoseProvider(exerciseID: "squat", options: Self.options).poses() {
            expected.append(pose.timestamp)
            if expected.count == 3 { break }
        }
        let step = Duration.seconds(expected[1] - expected[0])
        #expect(step == .milliseconds(125))

        let clock = ManualClock()
        let provider = try SimulatedPoseProvider(
            exerciseID: "squat", options: Self.options, realTime: true, clock: clock)
        let received = Mutex<[Double]>([])
        let stream = provider.poses()
        let consumer = Task {
            for await pose in stream {
                let count = received.withLock {
                    $0.append(pose.timestamp)
                    return $0.count
                }
                if count == 3 { return }
            }
        }
        defer { consumer.cancel() }
        #expect(await Self.eventually { clock.sleepers == 1 }, "the second pose waits on the clock")
        #expect(received.withLock { $0 } == [expected[0]], "the first pose at once")
        clock.advance(by: step - .milliseconds(1))
        #expect(clock.sleepers == 1, "1 ms before its time: the second pose still waits")
        #expect(received.withLock { $0 } == [expected[0]])
        clock.advance(by: .milliseconds(1))
        #expect(await Self.eventually { received.withLock { $0.count } == 2 && clock.sleepers == 1 })
        #expect(
            received.withLock { $0 } == Array(expected[0..<2]),
            "its time: the second pose, and the third waits")
        clock.advance(by: .seconds(expected[2] - expected[0]) - step)
        await consumer.value
        #expect(received.withLock { $0 } == expected)
    }
}
