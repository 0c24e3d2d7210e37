/// The line protocol of wearables on a serial port (`docs/haptic-serial-protocol.md`): ASCII
/// lines ending with `\n`, each one step the device queues and plays in order.
///
/// ```text
/// HELLO kinesia-haptic 1      once, when the port is opened
/// PULSE 90 80                 vibrate 90 ms at 80 %
/// PAUSE 110                   stay still 110 ms
/// STOP                        stop now and forget the queued steps (sent on close)
/// ```
public enum HapticLineProtocol {
    /// The protocol's version, in the greeting.
    public static let version = 1
    /// The greeting, sent once when the port is opened.
    public static let hello = "HELLO kinesia-haptic \(version)\n"
    /// Stops at once and empties the device's queue.
    public static let stop = "STOP\n"

    /// The lines of one pattern.
    public static func lines(for pattern: HapticPattern) -> [String] {
        pattern.steps.map { step in
            switch step {
            case .pulse(let milliseconds, let intensity): "PULSE \(milliseconds) \(intensity)\n"
            case .pause(let milliseconds): "PAUSE \(milliseconds)\n"
            }
        }
    }
}
