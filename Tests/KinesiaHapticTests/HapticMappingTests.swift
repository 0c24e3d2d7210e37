import Foundation
import KinesiaMotion
import Testing

@testable import KinesiaHaptic

struct HapticMappingTests {
    @Test func theBuiltInMappingHasTheIssuesPatterns() throws {
        let mapping = try HapticMapping.builtIn()
        #expect(mapping.pattern(for: .repCompleted)?.steps == [.pulse(milliseconds: 80, intensity: 60)])
        let double = try #require(mapping.pattern(for: .formFault))
        #expect(double.steps.filter { if case .pulse = $0 { true } else { false } }.count == 2)
        #expect(mapping.pattern(for: .repRejected) == double)
        let long = try #require(mapping.pattern(for: .setupIssue))
        #expect(long.steps == [.pulse(milliseconds: 700, intensity: 100)])
        let rising = try #require(mapping.pattern(for: .holdCompleted))
        let intensities = rising.steps.compactMap { if case .pulse(_, let i) = $0 { i } else { nil } }
        #expect(intensities == [25, 50, 75, 100])
        #expect(mapping.pattern(for: .visibilityRegained) == nil)
        for trigger in HapticTrigger.allCases {
            #expect(mapping.events[trigger] != nil, "\(trigger) is not mapped")
        }
    }

    @Test func aMappingWithoutAnEventOrWithAnUnknownPatternIsRefusedNamingIt() throws {
        let base = String(decoding: PackageResources.default_json, as: UTF8.self)
        let missing = base.replacingOccurrences(of: "\"setupFixed\": null,\n", with: "")
        let error = #expect(throws: HapticMappingError.self) {
            try HapticMapping(json: Array(missing.utf8), source: "m.json")
        }
        #expect(
            error?.description.hasPrefix("m.json: missing key \"setupFixed\"") == true,
            "\(String(describing: error))")
        let unknown = base.replacingOccurrences(
            of: "\"repCompleted\": \"short\"", with: "\"repCompleted\": \"shrot\"")
        let second = #expect(throws: HapticMappingError.self) {
            try HapticMapping(json: Array(unknown.utf8), source: "m.json")
        }
        #expect(
            second?.description.contains("names no pattern \"shrot\" (patterns: double, long, rising, short)")
                == true)
        let loud = base.replacingOccurrences(of: "\"intensity\": 60", with: "\"intensity\": 160")
        let third = #expect(throws: HapticMappingError.self) {
            try HapticMapping(json: Array(loud.utf8), source: "m.json")
        }
        #expect(third?.description.contains("must be 1 to 100") == true)
    }
}

struct HapticPlannerTests {
    let mapping = try! HapticMapping.builtIn()

    func played(_ actions: [HapticPlanner.Action]) -> [HapticTrigger] {
        actions.compactMap { if case .play(_, let trigger) = $0 { trigger } else { nil } }
    }

    @Test func eachEventPlaysItsPatternOneAtATime() {
        var planner = HapticPlanner(mapping: mapping)
        #expect(
            played(
                planner.receive(
                    .repCompleted(Rep(peak: 90, faults: [], start: 0, end: 2)), session: "l", at: 2)) == [
                    .repCompleted
                ])
        #expect(planner.busyUntil == 2.08)
        // During the short pulse, a form fault waits, then plays when the device is free.
        #expect(planner.receive(.formFault(.keepTrunkUpright), session: "l", at: 2.05).isEmpty)
        #expect(played(planner.tick(2.1)) == [.formFault])
    }

    @Test func setupOutranksAWaitingCountAndAStalePatternIsDropped() {
        var planner = HapticPlanner(mapping: mapping, maximumAge: 0.5)
        _ = planner.receive(.setupChanged([.tooFar]), session: "l", at: 1)  // 0.7 s long
        _ = planner.receive(
            .repCompleted(Rep(peak: 90, faults: [], start: 0, end: 1.1)), session: "l", at: 1.1)
        let replaced = planner.receive(
            .visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftKnee])), session: "l",
            at: 1.2)
        #expect(replaced == [.drop(.repCompleted, .busy)])
        #expect(played(planner.tick(1.7)) == [.visibilityLost])
        _ = planner.receive(.formFault(.keepTrunkUpright), session: "l", at: 1.8)
        // The long pulse ends at 2.4: by then the fault has waited 0.6 s, more than 0.5 s.
        #expect(planner.tick(3.0) == [.drop(.formFault, .stale)])
    }

    @Test func aCompletedHoldRises() {
        var planner = HapticPlanner(mapping: mapping)
        #expect(played(planner.receive(.holdStarted, session: "w", at: 1)) == [.holdStarted])
        #expect(
            played(
                planner.receive(
                    .repCompleted(Rep(peak: 80, faults: [], start: 1, end: 31)), session: "w", at: 31)) == [
                    .holdCompleted
                ])
    }

    @Test func theSerialLinesOfAPattern() throws {
        let double = try #require(mapping.pattern(for: .formFault))
        #expect(HapticLineProtocol.lines(for: double) == ["PULSE 90 80\n", "PAUSE 110\n", "PULSE 90 80\n"])
    }
}
