import Glibc
import KinesiaSystem

/// A wearable on a serial port (USB or Bluetooth serial), driven with ``HapticLineProtocol``.
///
/// Opening puts the terminal in raw mode (`cfmakeraw`: no echo, no line editing, no newline
/// translation, 8 bits), at the given speed, ignoring modem lines (`CLOCAL`), then sends the
/// greeting. Closing sends `STOP`.
///
/// ```swift
/// let wristband = try SerialHapticDevice(path: "/dev/ttyACM0")
/// try wristband.play(mapping.pattern(for: .repCompleted)!)   // writes "PULSE 80 60\n"
/// ```
public final class SerialHapticDevice: HapticDevice {
    /// The port.
    public let path: String
    private let descriptor: FileDescriptor

    /// Opens the port, makes it raw and greets the device.
    /// - Parameters:
    ///   - path: The port (`/dev/ttyACM0`).
    ///   - baudRate: The line speed (ignored by USB CDC devices; 115,200 by default).
    /// - Throws: ``HapticDeviceError``: no such device, permission, not a terminal, unsupported speed.
    public init(path: String, baudRate: Int = 115_200) throws(HapticDeviceError) {
        self.path = path
        let descriptor: FileDescriptor
        do {
            // O_NONBLOCK: do not wait for a carrier; cleared once CLOCAL is set.
            descriptor = try FileDescriptor.open(path, .readWrite.notControllingTerminal.nonBlocking)
        } catch {
            throw HapticDeviceError.opening(path, error, group: "dialout")
        }
        let fd = descriptor.rawValue
        guard isatty(fd) == 1 else { throw HapticDeviceError.notATerminal(path) }
        guard let speed = Self.speed(baudRate) else {
            throw HapticDeviceError.system(path, operation: "baud rate \(baudRate)", Errno(rawValue: EINVAL))
        }
        var settings = termios()
        do {
            try Errno.retryingOnInterrupt { tcgetattr(fd, &settings) }
            cfmakeraw(&settings)
            settings.c_cflag |= tcflag_t(CLOCAL | CREAD)
            try Errno.retryingOnInterrupt { cfsetispeed(&settings, speed) }
            try Errno.retryingOnInterrupt { cfsetospeed(&settings, speed) }
            try Errno.retryingOnInterrupt { tcsetattr(fd, TCSANOW, &settings) }
            let flags = try Errno.retryingOnInterrupt { fcntl(fd, F_GETFL) }
            try Errno.retryingOnInterrupt { fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        } catch {
            throw HapticDeviceError.system(path, operation: "setting up the terminal", error)
        }
        self.descriptor = descriptor
        try write(HapticLineProtocol.hello)
    }

    deinit {
        let bytes = Array(HapticLineProtocol.stop.utf8)
        let fd = descriptor.rawValue
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// Sends the pattern's lines; the device plays them on its own clock.
    public func play(_ pattern: HapticPattern) throws(HapticDeviceError) {
        try write(HapticLineProtocol.lines(for: pattern).joined())
    }

    private func write(_ text: String) throws(HapticDeviceError) {
        let bytes = Array(text.utf8)
        let fd = descriptor.rawValue
        var written = 0
        while written < bytes.count {
            do {
                written += try Errno.retryingOnInterrupt {
                    bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
                }
            } catch {
                throw HapticDeviceError.system(path, operation: "write", error)
            }
        }
    }

    /// Whether ``init(path:baudRate:)`` accepts this speed.
    public static func isSupported(baudRate: Int) -> Bool { speed(baudRate) != nil }

    /// The termios speed constant of a baud rate.
    static func speed(_ baudRate: Int) -> speed_t? {
        switch baudRate {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 921_600: speed_t(B921600)
        default: nil
        }
    }
}
