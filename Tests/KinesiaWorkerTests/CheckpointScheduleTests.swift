import Testing

@testable import KinesiaWorker

/// When a worker checkpoints its cameras: spread over the interval, one camera at a time, each
/// an interval after its last, and never a camera that analysed nothing since.
struct CheckpointScheduleTests {
    /// The worker's loop, one camera asked per turn, a turn every `step`, for `duration`: the
    /// times each camera was checkpointed.
    private func run(
        cameras count: Int, interval: Duration, step: Duration, duration: Duration, poses: (Duration) -> Int
    ) -> [[Duration]] {
        var schedule = CheckpointSchedule(interval: interval)
        var taken = Array(repeating: [Duration](), count: count)
        var now = Duration.zero
        var turn = 0
        while now <= duration {
            let index = turn % count
            turn += 1
            if schedule.isDue(camera: "cam\(index)", index: index, of: count, poses: poses(now), at: now) {
                schedule.taken(camera: "cam\(index)", poses: poses(now), at: now)
                taken[index].append(now)
            }
            now += step
        }
        return taken
    }

    @Test func sixtyFourCamerasAreCheckpointedOneAtATimeAcrossTheInterval() throws {
        let taken = run(
            cameras: 64, interval: .seconds(2), step: .microseconds(100), duration: .milliseconds(2020),
            poses: { Int($0 / .microseconds(100)) })
        // Every camera once in the first interval, the k-th at about k/64 of it (the first
        // camera's second checkpoint comes at 2.031 s).
        try #require(taken.allSatisfy { $0.count == 1 })
        let firsts = taken.map { $0[0] }.sorted()
        for (index, time) in firsts.enumerated() {
            let share = Duration.seconds(2) * (index + 1) / 64
            #expect(time >= share && time < share + .milliseconds(10))
        }
        // Never two within a few milliseconds: no burst.
        for (a, b) in zip(firsts, firsts.dropFirst()) { #expect(b - a >= .milliseconds(25)) }
    }

    @Test func eachNextCheckpointComesAnIntervalAfterItsLast() {
        let taken = run(
            cameras: 4, interval: .seconds(2), step: .milliseconds(1), duration: .seconds(9),
            poses: { Int($0 / .milliseconds(1)) })
        // The k-th of 4 first at k/4 of the interval (0.5, 1, 1.5, 2 s), then every 2 s.
        #expect(taken.map(\.count) == [5, 4, 4, 4])
        for times in taken {
            for (a, b) in zip(times, times.dropFirst()) {
                #expect(b - a >= .seconds(2) && b - a < .seconds(2) + .milliseconds(5))
            }
        }
    }

    @Test func aCameraThatAnalysedNothingSinceItsLastIsNotCheckpointedAgain() {
        // Poses stop at 1 s: each camera's first checkpoint, then none.
        let taken = run(
            cameras: 2, interval: .seconds(2), step: .milliseconds(1), duration: .seconds(10),
            poses: { min(1000, Int($0 / .milliseconds(1))) })
        #expect(taken.map(\.count) == [1, 1])
    }

    @Test func oneCameraIsDueAfterAWholeInterval() {
        let schedule = CheckpointSchedule(interval: .seconds(2))
        #expect(!schedule.isDue(camera: "cam0", index: 0, of: 1, poses: 5, at: .milliseconds(1999)))
        #expect(schedule.isDue(camera: "cam0", index: 0, of: 1, poses: 5, at: .seconds(2)))
    }
}
