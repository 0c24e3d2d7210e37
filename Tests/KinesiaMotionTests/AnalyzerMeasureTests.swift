import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

struct AnalyzerMeasureTests {
    @Test(arguments: Exercise.catalog, BodySide.allCases)
    func generatedBodiesHaveTheIntendedPrimaryAngle(exercise: Exercise, side: BodySide) throws {
        for value in stride(from: 0.0, through: 87.5, by: 12.5) {
            let pose = Body(exercise, side: side, value: value).pose(at: 0)
            let measured = try #require(exercise.measure.value(in: pose, side: side))
            #expect(abs(measured - value) < 1e-9, "\(exercise.id) \(side) at \(value): \(measured)")
        }
    }

    @Test(arguments: Exercise.catalog)
    func brokenRulesGoPastTheirLimit(exercise: Exercise) throws {
        for rule in exercise.formRules {
            let rest = Body(exercise, side: .right, value: 0)
            var broken = rest
            broken.breakRule(rule, side: .right)
            let before = try #require(rule.measure.value(in: rest.pose(at: 0), side: .right))
            let after = try #require(rule.measure.value(in: broken.pose(at: 0), side: .right))
            let amount = rule.measure.isRelativeToRepStart ? abs(after - before) : after
            #expect(amount > rule.limit + 5, "\(exercise.id) \(rule.fault)")
            // Breaking a rule leaves the primary measure where it was (0), except that a hip
            // measure is taken from the trunk: leaning it by L degrees makes the hip angle L.
            let primary = try #require(exercise.measure.value(in: broken.pose(at: 0), side: .right))
            let isHipMeasure = exercise.measure == .hipFlexion || exercise.measure == .hipAbduction
            let expected = isHipMeasure && rule.measure == .trunkLean ? rule.limit + 10 : 0
            #expect(abs(primary - expected) < 1e-9, "\(exercise.id) \(rule.fault): \(primary)")
        }
    }

    @Test(arguments: Measure.allCases)
    func frameKernelsAgreeExactlyWithMeasureValues(measure: Measure) {
        var generator = SplitMix64(seed: 7)
        var frame = PoseFrame()
        for _ in 0..<500 {
            var points: [Joint: CGPoint] = [:]
            for joint in Joint.allCases where generator.next() % 8 != 0 {
                points[joint] = CGPoint(x: generator.unit() * 1000, y: generator.unit() * 1000)
            }
            let pose = Pose(points: points, timestamp: 0)
            #expect(frame.load(pose) == nil)
            for side in BodySide.allCases {
                let kernel = MeasureKernel(measure, side: side)
                #expect(kernel.value(in: frame) == measure.value(in: pose, side: side))
            }
        }
    }
}
