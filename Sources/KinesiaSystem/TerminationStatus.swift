/// How a child process ended, as `waitpid` reports it.
public enum TerminationStatus: Hashable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(ProcessSignal)

    /// Decodes a `waitpid` status word (the `WIFEXITED`/`WIFSIGNALED` macros are not imported
    /// into Swift).
    package init(waitStatus status: Int32) {
        let signal = status & 0x7f
        if signal == 0 {
            self = .exited((status >> 8) & 0xff)
        } else {
            self = .signaled(ProcessSignal(rawValue: signal))
        }
    }

    /// The status as a shell reports it: the exit code, or 128 + N when signal N ended it.
    public var shellStatus: Int32 {
        switch self {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal.rawValue
        }
    }

    /// Whether the child exited with status 0.
    public var isSuccess: Bool { self == .exited(0) }

    /// `status 1` or `signal SIGKILL`.
    public var description: String {
        switch self {
        case .exited(let code): "status \(code)"
        case .signaled(let signal): "signal \(signal)"
        }
    }
}
