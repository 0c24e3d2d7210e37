import CKinesiaEvdev
import Glibc
import KinesiaSystem

/// A rumble step as the kernel receives it: the bytes of a `struct ff_effect` (`FF_RUMBLE`),
/// built by the C shim, so that what a test checks is what `EVIOCSFF` gets.
public struct RumbleEffect: Hashable, Sendable {
    /// The effect slot (-1: a new one).
    public var id: Int16
    /// The strong (low-frequency) motor, 0...0xFFFF.
    public var strongMagnitude: UInt16
    /// The weak (high-frequency) motor, 0...0xFFFF.
    public var weakMagnitude: UInt16
    /// How long it plays, in milliseconds.
    public var lengthMilliseconds: UInt16

    /// An effect.
    public init(id: Int16, strongMagnitude: UInt16, weakMagnitude: UInt16, lengthMilliseconds: UInt16) {
        self.id = id
        self.strongMagnitude = strongMagnitude
        self.weakMagnitude = weakMagnitude
        self.lengthMilliseconds = lengthMilliseconds
    }

    /// The C structure.
    var structure: ff_effect {
        kinesia_ff_rumble(id, strongMagnitude, weakMagnitude, lengthMilliseconds, 0)
    }

    /// The bytes of the `struct ff_effect` given to `EVIOCSFF` (48 on x86-64 and arm64).
    public var structureBytes: [UInt8] {
        withUnsafeBytes(of: structure) { Array($0) }
    }

    /// The event that plays effect `id` once (`count` 1) or stops it (0): the bytes of a
    /// `struct input_event` with type `EV_FF` (24 on 64-bit Linux).
    public static func playEventBytes(id: Int16, count: Int32) -> [UInt8] {
        withUnsafeBytes(of: kinesia_ff_play_event(UInt16(bitPattern: id), count)) { Array($0) }
    }
}

/// The system calls of force feedback, injectable: ``EvdevDevice`` makes them on a real
/// `/dev/input/eventN`; a test records what would be sent.
public protocol ForceFeedbackIO: ~Copyable {
    /// `EVIOCSFF`: uploads (or, with its id, updates) an effect; returns the id the kernel gave.
    func upload(_ effect: RumbleEffect) throws(HapticDeviceError) -> Int16
    /// Writes an `EV_FF` event that plays (`count` 1) or stops (0) effect `id`.
    func play(id: Int16, count: Int32) throws(HapticDeviceError)
    /// `EVIOCRMFF`: erases effect `id`.
    func erase(id: Int16) throws(HapticDeviceError)
}

/// A real evdev input device with a rumble motor (a game controller, a vibrating wristband
/// seen as an input device), opened read-write.
public struct EvdevDevice: ForceFeedbackIO, ~Copyable {
    /// The device path.
    public let path: String
    private let descriptor: FileDescriptor

    /// Opens `path` and checks that it can rumble.
    /// - Throws: ``HapticDeviceError``: no such device, permission (the `input` group), not an
    ///   input device, no rumble.
    public init(path: String) throws(HapticDeviceError) {
        self.path = path
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, O_RDWR)
        } catch {
            throw HapticDeviceError.opening(path, error, group: "input")
        }
        let supported: Int32
        do {
            let fd = descriptor.rawValue
            supported = try Errno.retryingOnInterrupt { kinesia_evdev_supports_rumble(fd) }
        } catch {
            if error == Errno(rawValue: ENOTTY) || error == Errno(rawValue: EINVAL) {
                throw HapticDeviceError.notAnInputDevice(path)
            }
            throw HapticDeviceError.system(path, operation: "EVIOCGBIT(EV_FF)", error)
        }
        guard supported == 1 else { throw HapticDeviceError.noRumble(path) }
        self.descriptor = descriptor
    }

    public func upload(_ effect: RumbleEffect) throws(HapticDeviceError) -> Int16 {
        var structure = effect.structure
        let fd = descriptor.rawValue
        do {
            try Errno.retryingOnInterrupt { kinesia_evdev_upload_effect(fd, &structure) }
        } catch {
            throw HapticDeviceError.system(path, operation: "EVIOCSFF", error)
        }
        return structure.id
    }

    public func play(id: Int16, count: Int32) throws(HapticDeviceError) {
        var event = kinesia_ff_play_event(UInt16(bitPattern: id), count)
        let fd = descriptor.rawValue
        do {
            try Errno.retryingOnInterrupt { kinesia_evdev_write_event(fd, &event) }
        } catch {
            throw HapticDeviceError.system(path, operation: "write(EV_FF)", error)
        }
    }

    public func erase(id: Int16) throws(HapticDeviceError) {
        let fd = descriptor.rawValue
        do {
            try Errno.retryingOnInterrupt { kinesia_evdev_erase_effect(fd, Int32(id)) }
        } catch {
            throw HapticDeviceError.system(path, operation: "EVIOCRMFF", error)
        }
    }
}

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

/// Host-side timing of patterns.
public enum HapticClock {
    /// Sleeps `milliseconds` on the calling thread.
    public static func sleep(milliseconds: Int) {
        ThreadSleep.sleep(.milliseconds(milliseconds))
    }
}
