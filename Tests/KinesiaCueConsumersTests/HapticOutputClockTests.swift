import KinesiaHaptic
import KinesiaService
import KinesiaSystem
import Synchronization
import Testing

@testable import KinesiaCueConsumers

/// The haptic output's attempts to open a missing device, on an injected clock: the first at
/// once, then after the back-off (0.5 s, 1 s, ...) of the output's clock, never sooner.
struct HapticOutputClockTests {
    @Test func aMissingDeviceIsTriedAgainAfterTheBackOffOfTheOutputsClock() {
        let clock = ManualClock()
        let attempts = Mutex(0)
        let output = HapticOutput(
            device: "serial /dev/ttyACM9",
            open: { () throws(HapticDeviceError) -> any HapticDevice in
                attempts.withLock { $0 += 1 }
                throw .noSuchDevice("/dev/ttyACM9")
            }, logger: Logger(label: "kinesia haptic", sink: CapturedText()), clock: clock)
        func poll() -> Int {
            output.poll()
            output.drain()
            return attempts.withLock { $0 }
        }
        #expect(poll() == 1)
        #expect(poll() == 1, "tried again before the back-off")
        clock.advance(by: .milliseconds(499))
        #expect(poll() == 1)
        clock.advance(by: .milliseconds(1))
        #expect(poll() == 2)
        clock.advance(by: .milliseconds(999))
        #expect(poll() == 2, "the second delay is twice the first")
        clock.advance(by: .milliseconds(1))
        #expect(poll() == 3)
        #expect(output.counters["deviceMissing"] == 1)
    }
}
