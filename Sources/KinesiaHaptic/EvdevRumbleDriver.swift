import CKinesiaEvdev
import KinesiaSystem

/// Plays patterns on a force-feedback motor, timed by the host: for each pulse, updates one
/// rumble effect (uploaded once, then updated in place by its id) with the pulse's length and
/// strength and plays it; waits for pulses and pauses. Closing erases the effect.
public final class EvdevRumbleDriver<IO: ForceFeedbackIO & ~Copyable>: HapticDevice {
    private let io: IO
    private var effectID: Int16 = -1
    private let wait: (Int) -> Void

    /// - Parameters:
    ///   - io: The device (``EvdevDevice``), or a recorder in tests.
    ///   - wait: Sleeps that many milliseconds (injectable for tests).
    public init(io: consuming IO, wait: @escaping (Int) -> Void = HapticClock.sleep(milliseconds:)) {
        self.io = io
        self.wait = wait
    }

    deinit {
        if effectID >= 0 { try? io.erase(id: effectID) }
    }

    /// Plays the pattern step by step and returns when it is over.
    public func play(_ pattern: HapticPattern) throws(HapticDeviceError) {
        for step in pattern.steps {
            switch step {
            case .pulse(let milliseconds, let intensity):
                let magnitude = UInt16(min(0xFFFF, max(0, intensity * 0xFFFF / 100)))
                let effect = RumbleEffect(
                    id: effectID, strongMagnitude: magnitude, weakMagnitude: magnitude,
                    lengthMilliseconds: UInt16(min(milliseconds, Int(UInt16.max))))
                effectID = try io.upload(effect)
                try io.play(id: effectID, count: 1)
                wait(milliseconds)
            case .pause(let milliseconds):
                wait(milliseconds)
            }
        }
    }
}
