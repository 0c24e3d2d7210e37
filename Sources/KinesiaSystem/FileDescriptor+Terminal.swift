import Glibc

extension FileDescriptor {
    /// Whether the descriptor is a terminal (`isatty`).
    public var isTerminal: Bool { isatty(rawValue) == 1 }

    /// Makes a serial line raw at `baudRate` (`cfmakeraw`: no echo, no line editing, no newline
    /// translation, 8 bits; `CLOCAL | CREAD`: modem lines ignored, the receiver on), then makes
    /// it blocking again (a port opened non-blocking so as not to wait for a carrier).
    ///
    /// - Throws: ``Errno/invalidArgument`` for a speed ``isSupportedSerialSpeed(_:)`` refuses;
    ///   ``Errno`` of `tcgetattr`, `tcsetattr`, `fcntl`.
    public func makeRawSerialLine(baudRate: Int) throws(Errno) {
        guard let speed = Self.serialSpeed(baudRate) else { throw .invalidArgument }
        var settings = termios()
        try Errno.retryingOnInterrupt { tcgetattr(rawValue, &settings) }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CLOCAL | CREAD)
        try Errno.retryingOnInterrupt { cfsetispeed(&settings, speed) }
        try Errno.retryingOnInterrupt { cfsetospeed(&settings, speed) }
        try Errno.retryingOnInterrupt { tcsetattr(rawValue, TCSANOW, &settings) }
        let flags = try Errno.retryingOnInterrupt { () -> Int32 in fcntl(rawValue, F_GETFL) }
        try Errno.retryingOnInterrupt { () -> Int32 in fcntl(rawValue, F_SETFL, flags & ~O_NONBLOCK) }
    }

    /// Whether ``makeRawSerialLine(baudRate:)`` accepts this speed: 9,600 to 921,600 baud.
    public static func isSupportedSerialSpeed(_ baudRate: Int) -> Bool { serialSpeed(baudRate) != nil }

    /// The termios speed constant of a baud rate.
    static func serialSpeed(_ baudRate: Int) -> speed_t? {
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

    /// Writes all of `bytes` (a stream: a terminal, a pipe), retrying short writes and `EINTR`.
    ///
    /// - Throws: ``Errno``.
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var written = 0
        while written < bytes.count {
            written += try Errno.retryingOnInterrupt {
                bytes.withUnsafeBytes { Glibc.write(rawValue, $0.baseAddress! + written, $0.count - written) }
            }
        }
    }
}
