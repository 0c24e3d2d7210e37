import CKinesiaEvdev
import KinesiaSystem

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
            descriptor = try FileDescriptor.open(path, .readWrite)
        } catch {
            throw HapticDeviceError.opening(path, error, group: "input")
        }
        let supported: Int32
        do {
            let fd = descriptor.rawValue
            supported = try Errno.retryingOnInterrupt { kinesia_evdev_supports_rumble(fd) }
        } catch {
            if error == .notATerminal || error == .invalidArgument {
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
