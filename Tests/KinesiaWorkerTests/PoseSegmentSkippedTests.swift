import KinesiaSimulation
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// The holes a segment keeps stay in order and each once, however they come.
struct PoseSegmentSkippedTests {
    private func segment(_ skipped: [Range<UInt64>] = []) -> PoseSegment {
        PoseSegment(stream: StreamID(rawValue: 7), first: 0, skipped: skipped)
    }

    @Test func holesInOrderAreAppended() {
        var kept = segment()
        for start in stride(from: UInt64(10), to: 1000, by: 10) {
            let added = kept.addSkipped(start..<start + 3)
            #expect(added)
        }
        #expect(kept.skipped.count == 99)
        #expect(kept.skipped == kept.skipped.sorted { $0.lowerBound < $1.lowerBound })
    }

    @Test func aHoleAlreadyKeptIsNotAddedAgain() {
        var kept = segment([3..<5, 9..<12, 20..<21])
        let again = [kept.addSkipped(9..<12), kept.addSkipped(20..<21)]
        #expect(again == [false, false])
        #expect(kept.skipped == [3..<5, 9..<12, 20..<21])
    }

    @Test func aHoleOutOfOrderGoesToItsPlace() {
        var kept = segment([3..<5, 9..<12, 20..<21])
        let added = [kept.addSkipped(0..<1), kept.addSkipped(13..<15), kept.addSkipped(9..<10)]
        #expect(added == [true, true, true])
        // After a kept hole of the same start, as a stable sort put it.
        #expect(kept.skipped == [0..<1, 3..<5, 9..<12, 9..<10, 13..<15, 20..<21])
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func anyOrderGivesTheSortedSetOfHoles(seed: UInt64) {
        var generator = SimulationRandom(seed: seed)
        var kept = segment()
        var expected: Set<Range<UInt64>> = []
        for _ in 0..<300 {
            let start = generator.next() % 200
            let range = start..<start + 1 + generator.next() % 3
            let added = kept.addSkipped(range)
            #expect(added == expected.insert(range).inserted)
        }
        #expect(kept.skipped.count == expected.count)
        #expect(zip(kept.skipped, kept.skipped.dropFirst()).allSatisfy { $0.lowerBound <= $1.lowerBound })
        #expect(Set(kept.skipped) == expected)
    }
}
