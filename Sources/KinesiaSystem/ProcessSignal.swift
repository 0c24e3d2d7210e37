import Glibc

/// A POSIX signal number with its conventional name, for signalling children and for
/// ``SignalStream``.
///
/// ```swift
/// for await signal in SignalStream([.interrupt, .terminate]) {
///     print("stopping on \(signal)")   // "stopping on SIGTERM"
/// }
/// ```
public struct ProcessSignal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The signal number (`SIGTERM` is 15 on Linux).
    public var rawValue: Int32

    /// Wraps a signal number.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// `SIGINT`: Control-C at a terminal.
    public static let interrupt = ProcessSignal(rawValue: SIGINT)
    /// `SIGTERM`: the polite request to stop (systemd, `kill`, the supervisor).
    public static let terminate = ProcessSignal(rawValue: SIGTERM)
    /// `SIGHUP`: the terminal went away.
    public static let hangup = ProcessSignal(rawValue: SIGHUP)
    /// `SIGKILL`: cannot be caught; the last resort after a shutdown deadline.
    public static let kill = ProcessSignal(rawValue: SIGKILL)
    /// `SIGQUIT`.
    public static let quit = ProcessSignal(rawValue: SIGQUIT)
    /// `SIGUSR1`.
    public static let user1 = ProcessSignal(rawValue: SIGUSR1)
    /// `SIGUSR2`.
    public static let user2 = ProcessSignal(rawValue: SIGUSR2)

    /// The conventional name, `SIGTERM`, or `signal N` for others.
    public var description: String {
        switch rawValue {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        case SIGKILL: "SIGKILL"
        case SIGQUIT: "SIGQUIT"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        case SIGABRT: "SIGABRT"
        case SIGSEGV: "SIGSEGV"
        case SIGILL: "SIGILL"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGPIPE: "SIGPIPE"
        case SIGTRAP: "SIGTRAP"
        default: "signal \(rawValue)"
        }
    }
}
