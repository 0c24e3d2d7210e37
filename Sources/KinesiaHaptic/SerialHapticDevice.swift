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
        guard descriptor.isTerminal else { throw HapticDeviceError.notATerminal(path) }
        guard FileDescriptor.isSupportedSerialSpeed(baudRate) else {
            throw HapticDeviceError.system(path, operation: "baud rate \(baudRate)", .invalidArgument)
        }
        do {
            try descriptor.makeRawSerialLine(baudRate: baudRate)
        } catch {
            throw HapticDeviceError.system(path, operation: "setting up the terminal", error)
        }
        self.descriptor = descriptor
        try write(HapticLineProtocol.hello)
    }

    deinit {
        try? descriptor.writeAll(Array(HapticLineProtocol.stop.utf8))
    }

    /// Sends the pattern's lines; the device plays them on its own clock.
    public func play(_ pattern: HapticPattern) throws(HapticDeviceError) {
        try write(HapticLineProtocol.lines(for: pattern).joined())
    }

    private func write(_ text: String) throws(HapticDeviceError) {
        do {
            try descriptor.writeAll(Array(text.utf8))
        } catch {
            throw HapticDeviceError.system(path, operation: "write", error)
        }
    }

    /// Whether ``init(path:baudRate:)`` accepts this speed.
    public static func isSupported(baudRate: Int) -> Bool { FileDescriptor.isSupportedSerialSpeed(baudRate) }
}
