import KinesiaReport
import Testing

/// The terminal's figures in words: counts by kind as `kinesia watch` and `kinesia demo` print
/// them.
struct TextFiguresTests {
    @Test func aTallyListsTheMostFrequentKindFirstThenByName() {
        #expect(
            TextFigures.tally(["visibilityChanged": 5, "formFault": 1, "repCompleted": 4, "repRejected": 1])
                == "5 visibilityChanged, 4 repCompleted, 1 formFault, 1 repRejected")
        #expect(TextFigures.tally([:]) == "")
    }

    @Test func aCountNamesItsNounInTheSingularOrThePlural() {
        #expect(TextFigures.count(1, "analytics record") == "1 analytics record")
        #expect(TextFigures.count(2, "process") == "2 processes")
    }
}
