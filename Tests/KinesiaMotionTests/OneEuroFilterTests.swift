import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaMotion

struct OneEuroFilterTests {
    private func filter(_ samples: [Double], fps: Double = 30, beta: Double = 0.02) -> [Double] {
        var filter = OneEuroFilter(minCutoff: 1, beta: beta, derivativeCutoff: 1)
        return samples.enumerated().map { filter.filter($0.element, at: Double($0.offset) / fps) }
    }

    @Test func theFirstSampleIsTakenAsItIs() {
        var filter = OneEuroFilter(minCutoff: 1, beta: 0.02, derivativeCutoff: 1)
        #expect(filter.value == nil)
        #expect(filter.filter(42, at: 3) == 42)
        #expect(filter.value == 42)
    }

    @Test func aConstantSignalStaysConstant() {
        #expect(filter(Array(repeating: 37.5, count: 100)).allSatisfy { $0 == 37.5 })
    }

    @Test func jitterIsReducedAtRest() {
        var generator = SplitMix64(seed: 11)
        let noisy = (0..<300).map { _ in 50 + (generator.unit() - 0.5) * 8 }
        let smoothed = filter(noisy)
        func spread(_ values: ArraySlice<Double>) -> Double {
            let mean = values.reduce(0, +) / Double(values.count)
            return (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
        }
        #expect(spread(smoothed[100...]) < spread(noisy[100...]) / 2.5)
    }

    @Test func aHigherBetaFollowsFastMovementWithLessLag() {
        let ramp = (0..<30).map { Double($0) * 10 }  // 300 per second
        let slow = filter(ramp, beta: 0)
        let fast = filter(ramp, beta: 0.05)
        #expect(ramp[29] - fast[29] < (ramp[29] - slow[29]) / 2)
        #expect(fast[29] < ramp[29])
    }

    @Test func theFilterMatchesTheReferenceFormula() {
        // One step by hand: dt = 0.1, derivative 100/s smoothed with alpha(1 Hz) ...
        var filter = OneEuroFilter(minCutoff: 1, beta: 0.02, derivativeCutoff: 1)
        _ = filter.filter(0, at: 0)
        let value = filter.filter(10, at: 0.1)
        let alpha = { (cutoff: Double) in 1 / (1 + 1 / (2 * Double.pi * cutoff * 0.1)) }
        let derivative = alpha(1) * 100
        let expected = alpha(1 + 0.02 * derivative) * 10
        #expect(abs(value - expected) < 1e-12)
    }

    @Test func resetForgetsThePast() {
        var filter = OneEuroFilter(minCutoff: 1, beta: 0.02, derivativeCutoff: 1)
        _ = filter.filter(0, at: 0)
        _ = filter.filter(0, at: 0.1)
        filter.reset()
        #expect(filter.value == nil)
        #expect(filter.filter(80, at: 0.2) == 80)
    }

    @Test func samplesThatDoNotAdvanceTimeOrAreNotFiniteChangeNothing() {
        var filter = OneEuroFilter(minCutoff: 1, beta: 0.02, derivativeCutoff: 1)
        _ = filter.filter(10, at: 1)
        #expect(filter.filter(90, at: 1) == 10)
        #expect(filter.filter(90, at: 0.5) == 10)
        #expect(filter.filter(.nan, at: 2) == 10)
        #expect(filter.filter(90, at: .infinity) == 10)
        #expect(filter.value == 10)
    }
}
