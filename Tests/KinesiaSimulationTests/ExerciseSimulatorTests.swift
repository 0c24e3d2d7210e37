import Foundation
import KinesiaMotion
import KinesiaSimulation
import KinesiaTestSupport
import Testing

struct ExerciseSimulatorTests {
    @Test(arguments: Exercise.catalog)
    func noiseFreePosesMeasureExactlyTheIntendedAngles(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let (simulator, simulation) = try Fixtures.run(
                exercise, Fixtures.options(noise: 0, dropouts: false, faultRate: 0.5))
            let measures = [exercise.measure] + exercise.formRules.map(\.measure)
            var compared = 0
            for pose in simulation.poses {
                for side in BodySide.allCases {
                    for measure in measures {
                        guard
                            let intended = simulator.intendedValue(
                                of: measure, side: side, at: pose.timestamp)
                        else { continue }
                        let measured = try #require(measure.value(in: pose, side: side))
                        #expect(
                            abs(measured - intended) < 1e-6,
                            "\(exercise.id) \(measure) \(side) at \(pose.timestamp): \(measured) vs \(intended)"
                        )
                        compared += 1
                    }
                }
            }
            // The primary measure is compared on both sides in every pose.
            #expect(compared >= 2 * simulation.poses.count)
        }
    }

    @Test(arguments: Exercise.catalog)
    func primaryMeasureFollowsTheIntendedCurveWithinTheNoise(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let (simulator, simulation) = try Fixtures.run(exercise, Fixtures.options(seed: 5))
            var errors: [Double] = []
            for pose in simulation.poses {
                for side in BodySide.allCases {
                    guard let measured = exercise.measure.value(in: pose, side: side) else { continue }
                    let intended = try #require(
                        simulator.intendedValue(of: exercise.measure, side: side, at: pose.timestamp))
                    errors.append(abs(measured - intended))
                }
            }
            #expect(errors.count > simulation.poses.count)
            #expect(Fixtures.quantile(errors, 0.5) < 1.5)
            #expect(Fixtures.quantile(errors, 0.95) < 3)
            #expect(errors.max() ?? .infinity < 8)
        }
    }

    @Test(arguments: Exercise.catalog)
    func repsRiseWellAboveTheMinimumPeakAndReturnBelowTheEnd(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let (simulator, simulation) = try Fixtures.run(
                exercise, Fixtures.options(noise: 0, dropouts: false))
            let first = try #require(simulation.poses.first)
            for side in BodySide.allCases {
                // A quiet start at rest, below the level that arms a session.
                let quiet = Fixtures.poses(simulation.poses, from: first.timestamp, to: first.timestamp + 1.0)
                let rest: Double
                switch exercise.kind {
                case .reps(_, let end, _): rest = end
                case .hold(let threshold, _): rest = threshold - exercise.sessionRules.holdBreakMargin
                }
                for pose in quiet {
                    #expect(try #require(exercise.measure.value(in: pose, side: side)) < rest)
                }
                for rep in simulation.truth.reps(side: side) {
                    switch exercise.kind {
                    case .reps(let start, let end, let minPeak):
                        #expect(rep.peak >= minPeak + 10)
                        #expect(rep.peak > start + 15)
                        #expect(rep.end - rep.start >= 1.0 && rep.end - rep.start <= 4)
                        let after = try #require(
                            simulator.intendedValue(of: exercise.measure, side: side, at: rep.end + 0.3))
                        #expect(after < end)
                    case .hold(let threshold, let seconds):
                        #expect(rep.peak >= threshold + 8)
                        if rep.outcome == .notCounted {
                            #expect(rep.end - rep.start < seconds)
                        } else {
                            // Held past its time: the value stays over the threshold a while longer.
                            let late = try #require(
                                simulator.intendedValue(of: exercise.measure, side: side, at: rep.end + 1.5))
                            #expect(late > threshold + 5)
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: Exercise.catalog)
    func faultsPushTheRuleMeasureClearlyBeyondItsLimit(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let (_, simulation) = try Fixtures.run(exercise, Fixtures.options(seed: 3, faultRate: 1))
            let rejected = simulation.truth.reps.filter { $0.outcome == .rejected }
            if exercise.formRules.isEmpty {
                #expect(rejected.isEmpty)
                return
            }
            #expect(
                rejected.count == simulation.truth.countedReps(side: .left).count
                    + simulation.truth.countedReps(side: .right).count)
            for rep in rejected {
                let fault = try #require(rep.faults.first)
                let rule = try #require(exercise.formRules.first { $0.fault == fault })
                let window = try #require(rep.faultTimes.first)
                // Drift rules compare with the value when the rep started.
                let startPose = try #require(simulation.poses.first { $0.timestamp >= rep.start })
                let reference = rule.measure.value(in: startPose, side: rep.side)
                let during = Fixtures.poses(simulation.poses, from: window[0], to: window[1])
                #expect(during.count >= 15)
                for pose in during {
                    let amount = try #require(
                        Fixtures.ruleAmount(rule, in: pose, side: rep.side, reference: reference))
                    #expect(
                        amount > rule.limit + 5, "\(exercise.id) \(fault) at \(pose.timestamp): \(amount)")
                }
                // The fault is mid-rep: the rep is well under way before and after it.
                #expect(window[0] > rep.start + 0.2)
                #expect(window[1] < rep.end - 0.2)
            }
        }
    }

    @Test(arguments: Exercise.catalog)
    func cleanRepsKeepEveryRuleWellWithinItsLimit(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            for noise in [0.0, 1.0] {
                let (_, simulation) = try Fixtures.run(
                    exercise, Fixtures.options(seed: 4, noise: noise, dropouts: false, faultRate: 0.5))
                // Without noise, 60% of the limit; with a pixel of noise, still 75%.
                let bound = noise == 0 ? 0.6 : 0.75
                for rep in simulation.truth.reps where rep.outcome != .notCounted {
                    let window = Fixtures.poses(simulation.poses, from: rep.start - 0.2, to: rep.end + 0.2)
                    let reference = window.first
                    for rule in exercise.formRules where !rep.faults.contains(rule.fault) {
                        let start = reference.flatMap { rule.measure.value(in: $0, side: rep.side) }
                        for pose in window {
                            let amount = try #require(
                                Fixtures.ruleAmount(rule, in: pose, side: rep.side, reference: start))
                            #expect(amount <= bound * rule.limit, "\(exercise.id) \(rule.fault) \(amount)")
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: Exercise.catalog)
    func posesKeepThePoseContract(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            for size in [CGSize(width: 1280, height: 720), CGSize(width: 720, height: 1280)] {
                let (_, simulation) = try Fixtures.run(exercise, Fixtures.options(seed: 9, imageSize: size))
                #expect(simulation.poses.count > 100)
                var previous = -Double.infinity
                for pose in simulation.poses {
                    #expect(pose.timestamp > previous)
                    previous = pose.timestamp
                    #expect(pose.imageSize == size)
                    #expect(!pose.isEmpty)
                    for (joint, point) in pose.points {
                        #expect(point.x.isFinite && point.y.isFinite)
                        // Inside the image and away from its edges (setup's 2% margin).
                        #expect(
                            point.x > 0.02 * size.width && point.x < 0.98 * size.width, "\(joint) \(point)")
                        #expect(
                            point.y > 0.02 * size.height && point.y < 0.98 * size.height, "\(joint) \(point)")
                        let confidence = try #require(pose.confidence[joint])
                        #expect(confidence >= 0.5 && confidence <= 1)
                    }
                    #expect(Set(pose.confidence.keys) == Set(pose.points.keys))
                    // Tall enough: not "too far".
                    let ys = pose.points.values.map(\.y)
                    #expect((ys.max()! - ys.min()!) > 0.3 * size.height)
                }
            }
        }
    }

    @Test(arguments: Exercise.catalog)
    func bodyIsPlacedForTheExercisesView(exercise: Exercise) async throws {
        try await offCooperativePool(.computing) {
            let (_, simulation) = try Fixtures.run(
                exercise, Fixtures.options(seed: 2, noise: 1, dropouts: false))
            for pose in simulation.poses {
                let neck = try #require(pose[.neck])
                let root = try #require(pose[.root])
                let left = try #require(pose[.leftShoulder])
                let right = try #require(pose[.rightShoulder])
                let ratio =
                    hypot(left.x - right.x, left.y - right.y) / hypot(neck.x - root.x, neck.y - root.y)
                switch exercise.view {
                case .side: #expect(ratio < 0.3, "\(exercise.id) sideways: \(ratio)")
                case .front: #expect(ratio > 0.6, "\(exercise.id) facing: \(ratio)")
                case .sideOrFront: break
                }
                if exercise.view == .front {
                    // Anatomical sides: facing the camera, the patient's left is on the image's right.
                    #expect(left.x > right.x)
                }
            }
        }
    }

    @Test func sideViewShowsTheNearSideAndHidesTheFarEyeAndEar() async throws {
        try await offCooperativePool(.computing) {
            let left = try ExerciseSimulator(
                exercise: .shoulderFlexion, options: Fixtures.options(sides: .left))
            let right = try ExerciseSimulator(
                exercise: .shoulderFlexion, options: Fixtures.options(sides: .right))
            #expect(left.facing == -1)
            #expect(right.facing == 1)
            let pose = try #require(right.run().poses.first)
            #expect(pose[.rightEye] != nil && pose[.rightEar] != nil)
            #expect(pose[.leftEye] == nil && pose[.leftEar] == nil)
            // Facing the image's right: the nose is ahead of the neck.
            #expect(try #require(pose[.nose]).x > (try #require(pose[.neck])).x)
        }
    }

    @Test func sameSeedGivesIdenticalPosesAndAnotherSeedDifferentOnes() async throws {
        try await offCooperativePool(.computing) {
            let a = try ExerciseSimulator(exercise: .hipAbduction, options: Fixtures.options(seed: 42)).run()
            let b = try ExerciseSimulator(exercise: .hipAbduction, options: Fixtures.options(seed: 42)).run()
            let c = try ExerciseSimulator(exercise: .hipAbduction, options: Fixtures.options(seed: 43)).run()
            #expect(a.poses == b.poses)
            #expect(a.truth == b.truth)
            #expect(a.poses != c.poses)
            #expect(a.truth != c.truth)
        }
    }

    @Test(arguments: [30.0, 8.0])
    func dropoutsAreShortAndNeverDuringAFault(frameRate: Double) async throws {
        try await offCooperativePool(.computing) {
            let (_, simulation) = try Fixtures.run(
                .shoulderAbduction, Fixtures.options(seed: 8, reps: 6, faultRate: 0.5, frameRate: frameRate))
            var gaps: [Joint: Int] = [:]
            var longest = 0
            var total = 0
            let faults = simulation.truth.reps.flatMap(\.faultTimes)
            for pose in simulation.poses {
                for joint in Joint.allCases {
                    if pose[joint] == nil {
                        gaps[joint, default: 0] += 1
                        for window in faults {
                            #expect(
                                !(pose.timestamp >= window[0] - 0.15 && pose.timestamp <= window[1] + 0.15))
                        }
                    } else if let gap = gaps.removeValue(forKey: joint) {
                        longest = max(longest, gap)
                        total += 1
                    }
                }
            }
            #expect(total > 0, "some joints drop out")
            #expect(longest <= 3)
            // Never as long as a session's visibility debounce (0.3 s), even at a low frame rate.
            #expect(Double(longest) / frameRate < 0.3)
            // Nothing drops out in the quiet start.
            let first = try #require(simulation.poses.first)
            for pose in Fixtures.poses(simulation.poses, from: first.timestamp, to: first.timestamp + 1) {
                #expect(pose.points.count == 19)
            }
        }
    }

    @Test func truthCountsRepsPerSideWithTheAskedFaultRate() async throws {
        try await offCooperativePool(.computing) {
            let simulator = try ExerciseSimulator(
                exercise: .shoulderFlexion, options: Fixtures.options(reps: 4, faultRate: 0.25))
            let truth = simulator.truth
            #expect(truth.reps.count == 8)
            #expect(truth.reps(side: .left).count == 4 && truth.reps(side: .right).count == 4)
            #expect(truth.reps.filter { $0.outcome == .rejected }.count == 2)
            #expect(truth.cleanCount(side: .left) + truth.cleanCount(side: .right) == 6)
            #expect(truth.reps.allSatisfy { $0.outcome == .clean ? $0.faults.isEmpty : $0.faults.count == 1 })
            // Alternating: left, right, left, right...
            #expect(truth.reps.map(\.side) == [.left, .right, .left, .right, .left, .right, .left, .right])
            #expect(zip(truth.reps, truth.reps.dropFirst()).allSatisfy { $0.end < $1.start })
        }
    }

    @Test func squatAndWallSitMoveBothLegsTogether() async throws {
        try await offCooperativePool(.computing) {
            let squat = try ExerciseSimulator(
                exercise: .squat, options: Fixtures.options(reps: 3, sides: .left))
            #expect(squat.sides == .together)
            #expect(squat.truth.reps(side: .left).map(\.start) == squat.truth.reps(side: .right).map(\.start))
            #expect(squat.truth.reps.count == 6)
        }
    }

    @Test func holdsLastTheirTimeAndOneShorterHoldIsGivenUp() async throws {
        try await offCooperativePool(.computing) {
            let simulator = try ExerciseSimulator(
                exercise: .wallSit, options: Fixtures.options(reps: 2, faultRate: 0.5))
            let truth = simulator.truth.reps(side: .left)
            #expect(truth.count == 3)
            #expect(truth.allSatisfy { $0.isHold })
            #expect(truth.filter { $0.outcome == .notCounted }.count == 1)
            #expect(truth.filter { $0.outcome == .rejected }.count == 1)
            for hold in truth where hold.outcome != .notCounted {
                #expect(abs(hold.end - hold.start - 30) < 1e-9)
            }
            let given = try ExerciseSimulator(
                exercise: .wallSit, options: SimulationOptions(reps: 2, brokenHold: false))
            #expect(given.truth.reps(side: .left).count == 2)
        }
    }

    @Test func simulationFollowsAnExerciseWithChangedThresholds() async throws {
        try await offCooperativePool(.computing) {
            var exercise = Exercise.shoulderFlexion
            exercise.kind = .reps(start: 40, end: 25, minPeak: 150)
            exercise.formRules = [FormRule(.keepElbowStraight, .elbowFlexion, above: 10)]
            let (simulator, simulation) = try Fixtures.run(
                exercise, Fixtures.options(noise: 0, faultRate: 0.5))
            #expect(simulation.truth.reps.allSatisfy { $0.peak >= 160 })
            for rep in simulation.truth.reps where rep.outcome == .clean {
                let bend = try #require(
                    simulator.intendedValue(of: .elbowFlexion, side: rep.side, at: rep.start + 0.5))
                #expect(bend <= 6)
            }
        }
    }

    @Test func unknownExercisesAndBadOptionsAreTypedErrors() async {
        await offCooperativePool(.computing) {
            #expect(throws: SimulationError.unsupportedExercise("plank", valid: Exercise.catalog.map(\.id))) {
                try ExerciseSimulator(exerciseID: "plank")
            }
            var exercise = Exercise.squat
            exercise.id = "jumpingJack"
            #expect(throws: SimulationError.self) { try ExerciseSimulator(exercise: exercise) }
            var options = SimulationOptions()
            options.frameRate = .nan
            #expect(throws: SimulationError.self) {
                try ExerciseSimulator(exercise: .squat, options: options)
            }
            options = SimulationOptions(reps: 0)
            #expect(throws: SimulationError.self) {
                try ExerciseSimulator(exercise: .squat, options: options)
            }
            var deep = Exercise.hipAbduction
            deep.kind = .reps(start: 12, end: 6, minPeak: 80)
            #expect(
                throws: SimulationError.unreachablePeak(exercise: "hipAbduction", minPeak: 80, maximum: 55)
            ) {
                try ExerciseSimulator(exercise: deep)
            }
            #expect(
                SimulationError.unsupportedExercise("plank", valid: ["squat", "wallSit"]).description
                    == "no simulation of exercise 'plank'; valid exercises: squat, wallSit")
        }
    }
}
