import Foundation
import KinesiaMotion
import KinesiaSimulation
import KinesiaTestSupport
import Testing

struct SimulationStreamTests {
    @Test func lazyStreamGivesExactlyThePosesOfRun() async throws {
        try await offCooperativePool(.computing) {
            let simulator = try ExerciseSimulator(exercise: .kneeFlexion, options: Fixtures.options(seed: 21))
            let run = simulator.run()
            let lazy = Array(simulator.poses())
            #expect(lazy == run.poses)
            #expect(simulator.poseCount == run.poses.count)
            #expect(simulator.truth == run.truth)
        }
    }

    @Test(arguments: [(30.0, 0.0), (29.97, 12.3), (7, -5), (60, 1000)])
    func poseCountIsTheNumberOfPosesOfRun(frameRate: Double, start: Double) async throws {
        try await offCooperativePool(.computing) {
            var options = Fixtures.options(seed: 4, reps: 1, frameRate: frameRate)
            options.startTime = start
            let simulator = try ExerciseSimulator(exercise: .hipAbduction, options: options)
            #expect(simulator.poseCount == simulator.run().poses.count)
        }
    }

    @Test func endlessStreamStartsWithTheFirstBlockAndGoesOnWithNewReps() async throws {
        try await offCooperativePool(.computing) {
            let simulator = try ExerciseSimulator(
                exercise: .elbowFlexion, options: Fixtures.options(seed: 3, reps: 2))
            let block = simulator.run()
            var stream = simulator.endless()
            var poses: [Pose] = []
            var truths: [SimulationTruth] = []
            for _ in 0..<(block.poses.count * 3) {
                let next = stream.next()
                poses.append(try #require(next))
                if truths.last != stream.truth { truths.append(stream.truth) }
            }
            #expect(Array(poses.prefix(block.poses.count)) == block.poses)
            // Later blocks follow on in time, each with its own reps.
            #expect(truths.count >= 3)
            #expect(truths[0] == block.truth)
            for (earlier, later) in zip(truths, truths.dropFirst()) {
                #expect(later.startTime == earlier.endTime)
                #expect(later.reps.count == earlier.reps.count)
                #expect(later.reps.map(\.peak) != earlier.reps.map(\.peak))
            }
            #expect(stream.count == poses.count)
            // Timestamps run on at the frame rate, across block boundaries.
            for (a, b) in zip(poses, poses.dropFirst()) {
                #expect(abs(b.timestamp - a.timestamp - 1.0 / 30) < 1e-9)
            }
        }
    }

    @Test(arguments: Exercise.catalog)
    func endlessStreamMovesSmoothlyAcrossBlocks(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let simulator = try ExerciseSimulator(
                exercise: exercise, options: Fixtures.options(seed: 6, reps: 1, noise: 0, dropouts: false))
            var stream = simulator.endless()
            let first = stream.next()
            var previous = try #require(first)
            let height = 720.0
            var worst = 0.0
            let blockPoses = simulator.run().poses.count
            while stream.count < 3 * blockPoses {
                let next = stream.next()
                let pose = try #require(next)
                for (joint, point) in pose.points {
                    let before = try #require(previous[joint])
                    // No joint jumps: under 5% of the image height in one frame at 30 Hz.
                    let step = hypot(point.x - before.x, point.y - before.y)
                    worst = max(worst, step)
                    #expect(step < 0.06 * height, "\(exercise.id) \(joint)")
                }
                previous = pose
            }
            // Fast limbs move up to about 40 pixels a frame (about 4 m/s): a fault's quick swing.
            #expect(worst > 5)
        }
    }

    @Test func endlessIntendedValuesCoverLaterBlocks() async throws {
        try await offCooperativePool(.computing) {
            let simulator = try ExerciseSimulator(
                exercise: .squat, options: Fixtures.options(seed: 2, reps: 1, noise: 0, dropouts: false))
            var stream = simulator.endless()
            let firstEnd = simulator.truth.endTime
            while let pose = stream.next(), pose.timestamp < firstEnd + 6 {
                guard pose.timestamp > firstEnd else { continue }
                let intended = try #require(
                    simulator.intendedValue(of: .kneeFlexion, side: .left, at: pose.timestamp))
                let measured = try #require(Measure.kneeFlexion.value(in: pose, side: .left))
                #expect(abs(intended - measured) < 1e-6)
            }
        }
    }

    @Test func providerYieldsTheBlockAndEnds() async throws {
        let simulator = try ExerciseSimulator(
            exercise: .hipFlexion, options: Fixtures.options(seed: 5, reps: 1))
        let provider = SimulatedPoseProvider(simulator: simulator)
        var poses: [Pose] = []
        for await pose in provider.poses() { poses.append(pose) }
        #expect(poses == simulator.run().poses)
        #expect(provider.truth == simulator.truth)
        // Each call gives a new stream from the start.
        var again: [Pose] = []
        for await pose in provider.poses() { again.append(pose) }
        #expect(again == poses)
    }

    @Test func loopingProviderKeepsGoingPastOneBlock() async throws {
        let provider = try SimulatedPoseProvider(
            exerciseID: "ankleDorsiflexion", options: Fixtures.options(seed: 5, reps: 1), loops: true)
        let blockEnd = provider.truth.endTime
        var count = 0
        var last = 0.0
        for await pose in provider.poses() {
            count += 1
            last = pose.timestamp
            if pose.timestamp > 2.5 * blockEnd { break }
        }
        #expect(last > 2.5 * blockEnd)
        #expect(count > 60)
    }

    @Test func realTimeProviderPacesPosesByTheirTimestamps() async throws {
        let options = Fixtures.options(seed: 5, reps: 1, frameRate: 50)
        let provider = try SimulatedPoseProvider(exerciseID: "squat", options: options, realTime: true)
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        for await _ in provider.poses() {
            count += 1
            if count == 11 { break }
        }
        // Ten frame intervals at 50 Hz: at least 0.2 s (no upper bound: the machine may be busy).
        #expect(start.duration(to: clock.now) >= .milliseconds(190))
    }
}
