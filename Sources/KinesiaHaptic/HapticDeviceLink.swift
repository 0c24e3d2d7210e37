import KinesiaSystem

/// Whether a haptic device is there and usable, and when to try it again: a value-type state
/// machine with no I/O, time passed in (seconds on any monotonic clock).
///
/// A wearable is plugged in after the process started, unplugged in the middle of a set, or
/// not given permission yet: none of these ends `kinesia haptic`. It waits for the device,
/// trying to open it again with a back-off (0.5 s doubling to 5 s by default), tells the
/// operator once per new problem (not at every attempt), and goes back to waiting when a write
/// says the device is gone (`EIO`, `ENXIO`, `ENODEV`: a USB serial port unplugged).
///
/// ```swift
/// var link = HapticDeviceLink()
/// link.tick(at: 0)                              // [.open]: the first attempt is at once
/// link.openFailed(.noSuchDevice(path), at: 0)   // [.report("waiting for ...")]; retry at 0.5
/// link.tick(at: 0.2)                            // []
/// link.tick(at: 0.5)                            // [.open]
/// link.opened(at: 0.5)                          // [.report("... ready")]
/// link.writeFailed(.system(path, operation: "write", .inputOutput), at: 9)
///                                               // [.close, .report("lost ...")]
/// ```
public struct HapticDeviceLink: Hashable, Sendable {
    /// How long to wait between two attempts to open the device.
    public struct Backoff: Hashable, Sendable {
        /// The first delay, in seconds.
        public var initial: Double
        /// The longest delay, in seconds.
        public var maximum: Double

        /// 0.5 s, doubling up to 5 s.
        public init(initial: Double = 0.5, maximum: Double = 5) {
            self.initial = initial
            self.maximum = max(initial, maximum)
        }
    }

    /// What the caller does.
    public enum Action: Hashable, Sendable {
        /// Try to open the device now, then call ``opened(at:)`` or ``openFailed(_:at:)``.
        case open
        /// Close the device (it is gone); the next ``tick(at:)`` that says ``open`` reopens it.
        case close
        /// Tell the operator (a log line).
        case report(String)
    }

    /// Where the device stands.
    public enum State: Hashable, Sendable {
        /// Not open; the next attempt is due at `retryAt`.
        case waiting(retryAt: Double)
        /// An attempt to open it is under way.
        case opening
        /// Open: patterns are played on it.
        case ready
    }

    /// The back-off.
    public let backoff: Backoff
    /// Where the device stands.
    public private(set) var state: State = .waiting(retryAt: -.infinity)
    /// The problem that keeps the device closed (`nil` when ready, or before the first attempt).
    public private(set) var problem: HapticDeviceError?
    /// How many times the device was opened.
    public private(set) var opens = 0
    /// Failed attempts to open it for any reason but its absence, and writes that failed.
    public private(set) var errors = 0
    private var delay: Double

    /// A link that tries to open the device at the first ``tick(at:)``.
    public init(backoff: Backoff = Backoff()) {
        self.backoff = backoff
        delay = backoff.initial
    }

    /// Whether patterns can be played now.
    public var isReady: Bool { state == .ready }

    /// Whether the device is not there at all (as opposed to there but unusable, or ready).
    public var isMissing: Bool {
        guard !isReady, let problem else { return false }
        return Self.meansMissing(problem)
    }

    /// Time passes: ``Action/open`` when an attempt is due.
    public mutating func tick(at now: Double) -> [Action] {
        guard case .waiting(let retryAt) = state, now >= retryAt else { return [] }
        state = .opening
        return [.open]
    }

    /// The device was opened.
    public mutating func opened(at now: Double) -> [Action] {
        let wasWaitingFor = problem
        state = .ready
        problem = nil
        delay = backoff.initial
        opens += 1
        guard let wasWaitingFor else { return [] }
        return [.report("the device is ready (it was \(Self.summary(wasWaitingFor)))")]
    }

    /// An attempt to open the device failed: wait, and tell the operator when the problem is new.
    public mutating func openFailed(_ error: HapticDeviceError, at now: Double) -> [Action] {
        state = .waiting(retryAt: now + delay)
        delay = min(backoff.maximum, delay * 2)
        if !Self.meansMissing(error) { errors += 1 }
        guard error != problem else { return [] }
        problem = error
        return [
            .report(
                "\(error); waiting for the device (trying again every \(Self.seconds(backoff.maximum)) s at most)"
            )
        ]
    }

    /// A write to the device failed: when the device is gone, close it and wait for it again;
    /// otherwise the error is counted and the device kept.
    public mutating func writeFailed(_ error: HapticDeviceError, at now: Double) -> [Action] {
        errors += 1
        guard Self.meansGone(error) else { return [.report("\(error) (the device stays in use)")] }
        state = .waiting(retryAt: now + backoff.initial)
        delay = backoff.initial * 2
        problem = error
        return [.close, .report("lost the device: \(error); waiting for it again")]
    }

    /// Whether an error means that the device is not there (no such file, or no such device
    /// behind the file).
    public static func meansMissing(_ error: HapticDeviceError) -> Bool {
        switch error {
        case .noSuchDevice: true
        case .system(_, _, let errno): gone.contains(errno)
        default: false
        }
    }

    /// Whether a write error means that the device went away.
    public static func meansGone(_ error: HapticDeviceError) -> Bool {
        guard case .system(_, _, let errno) = error else { return false }
        return gone.contains(errno)
    }

    /// The errors of a device that was unplugged: `EIO` (a hung-up terminal), `ENXIO`,
    /// `ENODEV`, and `EPIPE`.
    static let gone: Set<Errno> = [
        .inputOutput, .noSuchDevice, .noDevice, .brokenPipe,
    ]

    private static func summary(_ error: HapticDeviceError) -> String {
        meansMissing(error) ? "missing" : "unusable: \(error)"
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
