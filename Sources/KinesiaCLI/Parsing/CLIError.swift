import KinesiaService

/// Why a command did not run to the end, as the top-level funnel (``Kinesia/main(_:context:)``)
/// reports it.
///
/// | case | printed on | exit status |
/// |---|---|---|
/// | ``help(_:)`` | standard output | 0 |
/// | ``usage(_:)`` | standard error, with the usage line | 64 (`EX_USAGE`) |
/// | ``failure(_:)`` | standard error | 1 |
///
/// Any other error a command throws is reported like ``failure(_:)``.
public enum CLIError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Help was asked for (`--help`, `-h`, `kinesia help`); the text to print.
    case help(String)
    /// The command line is wrong: an unknown flag, a missing or invalid value.
    case usage(String)
    /// The command ran and failed (a missing file, a socket error...).
    case failure(String)

    /// The message.
    public var description: String {
        switch self {
        case .help(let text), .usage(let text), .failure(let text): text
        }
    }

    /// The process exit status for this error.
    public var exitStatus: Int32 {
        switch self {
        case .help: 0
        case .usage: 64
        case .failure: 1
        }
    }
}

/// An error a command throws to end with a given exit status and no message (e.g. a `status`
/// check that reports "unhealthy" with 1 after printing its own output).
public struct ExitStatus: Error, Hashable, Sendable {
    /// The process exit status.
    public var code: Int32

    /// Creates an exit status.
    public init(_ code: Int32) { self.code = code }
}

extension CLIError {
    /// The exit-code error of a service's: a usage error stays one (status 64), the rest are
    /// failures (status 1).
    init(_ error: any ServiceError) {
        self = error.isUsageError ? .usage(error.description) : .failure(error.description)
    }
}

extension CLIError {
    /// What `body` returns; a service's error it throws becomes the command's.
    static func from<Value, Failure: ServiceError>(_ body: () throws(Failure) -> Value) throws(CLIError)
        -> Value
    {
        do {
            return try body()
        } catch {
            throw CLIError(error)
        }
    }
}
