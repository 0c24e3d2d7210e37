import KinesiaSystem
import Testing

/// `Duration.secondsText`: seconds with one decimal, rounded, never negative.
struct DurationSecondsTextTests {
    @Test(arguments: [
        (Duration.zero, "0.0"), (.milliseconds(49), "0.0"), (.milliseconds(50), "0.1"),
        (.milliseconds(83_521), "83.5"), (.seconds(3), "3.0"), (.milliseconds(-2_000), "0.0"),
    ])
    func secondsWithOneDecimal(duration: Duration, text: String) {
        #expect(duration.secondsText == text)
    }
}
