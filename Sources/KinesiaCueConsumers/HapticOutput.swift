import Dispatch
package import KinesiaHaptic
package import KinesiaService
import KinesiaSystem
import Synchronization

/// The device of `kinesia haptic`: plays patterns on a serial queue of its own, one at a time,
/// so that the bus is read on time, and keeps the device as a ``HapticDeviceLink`` decides:
/// opened when it is there, waited for (tried again with a back-off, told once) when it is
/// missing or unusable, closed and waited for again when a write says it was unplugged.
///
/// The device is used only on the queue (hence `@unchecked Sendable`: the queue is the
/// confinement); the link and the counters are behind locks, read by the consumer's thread.
package final class HapticOutput: @unchecked Sendable {
    private let open: @Sendable () throws(HapticDeviceError) -> any HapticDevice
    private let name: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "kinesia.haptic.device")
    private let link = Mutex(HapticDeviceLink())
    private let counts = Mutex((played: 0, lost: 0))
    /// What the link's back-off is timed on.
    private let clock: ElapsedClock
    /// The open device (used on `queue` only).
    private var device: (any HapticDevice)?

    /// - Parameters:
    ///   - device: What the device is, for the log (`serial /dev/ttyACM0`).
    ///   - open: Opens the device (on the output's queue).
    ///   - clock: What the back-off between attempts to open the device is timed on.
    package init(
        device: String, open: @escaping @Sendable () throws(HapticDeviceError) -> any HapticDevice,
        logger: Logger, clock: some Clock<Duration> = ContinuousClock()
    ) {
        name = device
        self.open = open
        self.logger = logger
        self.clock = ElapsedClock(clock)
    }

    private var now: Double { clock.seconds }

    /// Whether the device is open.
    package var isReady: Bool { link.withLock { $0.isReady } }

    /// The counters of `health/<name>/`: `played`, `lost` (patterns decided while there was no
    /// device), `deviceReady` and `deviceMissing` (1 or 0), `deviceOpens`, `deviceErrors`.
    package var counters: [String: Int] {
        let (played, lost) = counts.withLock { ($0.played, $0.lost) }
        return link.withLock { link in
            [
                "played": played, "lost": lost, "deviceReady": link.isReady ? 1 : 0,
                "deviceMissing": link.isMissing ? 1 : 0, "deviceOpens": link.opens,
                "deviceErrors": link.errors,
            ]
        }
    }

    /// Opens the device when an attempt is due (call it often: every loop of the consumer).
    package func poll() {
        let now = self.now
        guard link.withLock({ $0.tick(at: now) }).contains(.open) else { return }
        queue.async { [self] in
            do throws(HapticDeviceError) {
                device = try open()
                perform(link.withLock { $0.opened(at: self.now) })
            } catch {
                perform(link.withLock { $0.openFailed(error, at: self.now) })
            }
        }
    }

    /// A pattern decided while there was no device.
    package func countLost() { counts.withLock { $0.lost += 1 } }

    /// Plays `pattern` after what is queued (counted as lost when the device is gone by then).
    package func enqueue(_ pattern: HapticPattern) {
        queue.async { [self] in
            guard let device else {
                countLost()
                return
            }
            do throws(HapticDeviceError) {
                try device.play(pattern)
                counts.withLock { $0.played += 1 }
            } catch {
                countLost()
                perform(link.withLock { $0.writeFailed(error, at: self.now) })
            }
        }
    }

    /// Waits until everything queued has been played.
    package func drain() { queue.sync {} }

    /// Closes the device (a serial wearable is told `STOP`).
    package func close() { queue.sync { device = nil } }

    /// Performs the link's actions, on the queue.
    private func perform(_ actions: [HapticDeviceLink.Action]) {
        for action in actions {
            switch action {
            case .open: break  // only from tick, handled by poll
            case .close: device = nil
            case .report(let text):
                // The problems name the device's path; the news that it is ready does not.
                if isReady { logger.info("\(name): \(text)") } else { logger.warning(text) }
            }
        }
    }
}
