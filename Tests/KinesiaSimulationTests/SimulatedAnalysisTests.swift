import Foundation
import KinesiaMotion
import KinesiaSimulation
import KinesiaTestSupport
import Testing

/// The analysis finds exactly what the simulator put in: reps, holds, faults and peaks.
struct SimulatedAnalysisTests {
    /// How a run is set up: frame rate, image, moving sides.
    struct Variant: Sendable, CustomTestStringConvertible {
        var name: String
        var frameRate: Double
        var imageSize: CGSize
        var sides: SimulatedSides
        var seed: UInt64

        var testDescription: String { name }

        static let all = [
            Variant(
                name: "30 Hz landscape, alternating", frameRate: 30,
                imageSize: CGSize(width: 1280, height: 720),
                sides: .alternating, seed: 1),
            Variant(
                name: "60 Hz portrait, left only", frameRate: 60, imageSize: CGSize(width: 720, height: 1280),
                sides: .left, seed: 2),
            Variant(
                name: "8 Hz landscape, right only", frameRate: 8,
                imageSize: CGSize(width: 1280, height: 720),
                sides: .right, seed: 3),
        ]
    }

    /// Everything one analyzer reported over a run.
    struct Report {
        var reps: [(clean: Bool, rep: Rep)] = []
        var faults: [FormFeedback] = []
        var holdsStarted = 0
        var setupChanges: [Set<SetupIssue>] = []
        var visibilityChanges: [Visibility] = []
        var snapshot = MotionSnapshot()
    }

    static func analyze(_ poses: some Sequence<Pose>, _ exercise: Exercise, side: BodySide) -> Report {
        var analyzer = MotionAnalyzer(exercise: exercise, side: side)
        var report = Report()
        for pose in poses {
            for event in analyzer.process(pose) {
                switch event {
                case .repCompleted(let rep): report.reps.append((true, rep))
                case .repRejected(let rep): report.reps.append((false, rep))
                case .formFault(let fault): report.faults.append(fault)
                case .holdStarted: report.holdsStarted += 1
                case .setupChanged(let issues): report.setupChanges.append(issues)
                case .visibilityChanged(let visibility): report.visibilityChanges.append(visibility)
                case .baselineCompleted: break
                }
            }
        }
        report.snapshot = analyzer.snapshot
        return report
    }

    /// Checks one side's report against the truth.
    static func expectMatch(
        _ report: Report, _ truth: SimulationTruth, side: BodySide, exercise: Exercise, context: String
    ) {
        let expected = truth.countedReps(side: side)
        #expect(report.reps.count == expected.count, "\(context) \(side): judged reps")
        #expect(report.snapshot.repCount == truth.cleanCount(side: side), "\(context) \(side): clean")
        #expect(
            report.snapshot.rejectedCount == truth.rejectedCount(side: side), "\(context) \(side): rejected")
        for (index, (found, want)) in zip(report.reps, expected).enumerated() {
            let label = "\(context) \(side) rep \(index)"
            #expect(found.clean == (want.outcome == .clean), "\(label): clean")
            #expect(found.rep.faults == want.faults, "\(label): faults")
            #expect(abs(found.rep.peak - want.peak) < 3, "\(label): peak \(found.rep.peak) vs \(want.peak)")
            // Smoothing starts a rep a little after the raw value crosses the level.
            #expect(
                found.rep.start >= want.start - 0.1 && found.rep.start <= want.start + 0.5, "\(label): start")
            #expect(abs(found.rep.end - want.end) < 0.6, "\(label): end \(found.rep.end) vs \(want.end)")
        }
        // Each injected fault is reported live, once, and nothing else.
        #expect(report.faults == expected.flatMap(\.faults), "\(context) \(side): live faults")
        if case .hold = exercise.kind {
            #expect(report.holdsStarted == truth.reps(side: side).count, "\(context) \(side): holds started")
        }
        // Well placed, always in view: no setup issue, visible from the start.
        #expect(
            report.setupChanges.allSatisfy { $0.isEmpty }, "\(context) \(side): setup \(report.setupChanges)")
        #expect(report.visibilityChanges.map(\.isVisible) == [true], "\(context) \(side): visibility")
    }

    @Test(arguments: Exercise.catalog, Variant.all)
    func analysisFindsExactlyTheSimulatedRepsHoldsAndFaults(exercise: Exercise, variant: Variant) async throws
    {
        try await offCooperativePool(.computing) {
            var options = SimulationOptions(
                seed: variant.seed, frameRate: variant.frameRate, imageSize: variant.imageSize, reps: 4,
                sides: variant.sides, faultRate: 0.5)
            options.startTime = 1000
            let simulation = try ExerciseSimulator(exercise: exercise, options: options).run()
            let truth = simulation.truth
            if !exercise.formRules.isEmpty {
                #expect(truth.reps.contains { $0.outcome == .rejected })
            }
            #expect(truth.reps.contains { $0.outcome == .clean })
            for side in BodySide.allCases {
                let report = Self.analyze(simulation.poses, exercise, side: side)
                Self.expectMatch(
                    report, truth, side: side, exercise: exercise, context: "\(exercise.id) \(variant.name)")
            }
        }
    }

    @Test(arguments: Exercise.catalog.filter { $0.id != "squat" && $0.id != "wallSit" })
    func restingSideCountsNothing(exercise: Exercise) throws {
        let simulator = try ExerciseSimulator(
            exercise: exercise, options: Fixtures.options(seed: 12, sides: .left, faultRate: 1))
        let report = Self.analyze(simulator.run().poses, exercise, side: .right)
        #expect(report.reps.isEmpty)
        #expect(report.faults.isEmpty)
        #expect(report.holdsStarted == 0)
        // The resting limb stays below the level that ends a rep.
        guard case .reps(_, let end, _) = exercise.kind else {
            Issue.record("\(exercise.id) is not a rep exercise: \(exercise.kind)")
            return
        }
        #expect(report.snapshot.best < end)
    }

    @Test func manySeedsAgreeWithTheAnalysis() async throws {
        try await offCooperativePool(.computing) {
            for seed in UInt64(100)..<UInt64(106) {
                for exercise in Exercise.catalog {
                    let options = SimulationOptions(seed: seed, reps: 3, faultRate: 0.4)
                    let simulation = try ExerciseSimulator(exercise: exercise, options: options).run()
                    for side in BodySide.allCases {
                        let report = Self.analyze(simulation.poses, exercise, side: side)
                        Self.expectMatch(
                            report, simulation.truth, side: side, exercise: exercise,
                            context: "seed \(seed) \(exercise.id)")
                    }
                }
            }
        }
    }

    @Test func endlessStreamKeepsAgreeingBlockAfterBlock() throws {
        let simulator = try ExerciseSimulator(
            exercise: .shoulderAbduction, options: SimulationOptions(seed: 4, reps: 2, faultRate: 0.5))
        var stream = simulator.endless()
        var poses: [Pose] = []
        var truths: [SimulationTruth] = []
        while truths.count < 4 {
            guard let pose = stream.next() else { break }
            poses.append(pose)
            if truths.last != stream.truth { truths.append(stream.truth) }
        }
        // Whole blocks only: drop the poses of the fourth block.
        let complete = Array(truths.prefix(3))
        let lastEnd = try #require(complete.last?.endTime)
        let analysed = poses.filter { $0.timestamp < lastEnd }
        for side in BodySide.allCases {
            let report = Self.analyze(analysed, .shoulderAbduction, side: side)
            #expect(report.snapshot.repCount == complete.map { $0.cleanCount(side: side) }.reduce(0, +))
            #expect(
                report.snapshot.rejectedCount == complete.map { $0.rejectedCount(side: side) }.reduce(0, +))
            #expect(
                report.reps.map(\.rep.faults) == complete.flatMap { $0.countedReps(side: side).map(\.faults) }
            )
        }
    }
}
