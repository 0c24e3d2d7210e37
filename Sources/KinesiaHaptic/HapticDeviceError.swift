public import KinesiaSystem

/// Why a haptic device cannot be used, in words a person can act on.
public enum HapticDeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No file at that path.
    case noSuchDevice(String)
    /// The user may not open it (not in the `input` or `dialout` group).
    case permissionDenied(String, group: String)
    /// The file is not an evdev input device (`/dev/input/eventN`).
    case notAnInputDevice(String)
    /// The input device has no rumble motor (no `FF_RUMBLE`).
    case noRumble(String)
    /// The file is not a terminal (a serial port is `/dev/ttyUSB0`, `/dev/ttyACM0`, `/dev/rfcomm0`).
    case notATerminal(String)
    /// A system call failed.
    case system(String, operation: String, Errno)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .noSuchDevice(let path): "no device at \(path)"
        case .permissionDenied(let path, let group):
            "permission denied opening \(path): add the user to the '\(group)' group (then log in again)"
        case .notAnInputDevice(let path):
            "\(path) is not an evdev input device (force feedback needs /dev/input/eventN)"
        case .noRumble(let path): "\(path) has no rumble motor (the device does not support FF_RUMBLE)"
        case .notATerminal(let path):
            "\(path) is not a serial port (not a terminal device: use /dev/ttyUSB0, /dev/ttyACM0, /dev/rfcomm0...)"
        case .system(let path, let operation, let errno): "\(path): \(operation) failed: \(errno)"
        }
    }

    /// The error of `open` on `path`.
    static func opening(_ path: String, _ errno: Errno, group: String) -> HapticDeviceError {
        switch errno {
        case .noSuchFile: .noSuchDevice(path)
        case .accessDenied, .notPermitted: .permissionDenied(path, group: group)
        default: .system(path, operation: "open", errno)
        }
    }
}
