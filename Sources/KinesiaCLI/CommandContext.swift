public import KinesiaService

/// What a running command writes to and reads from: its outputs, a logger and the environment.
///
/// The real process uses standard output and error; tests pass ``CapturedText`` sinks and run
/// the command in-process.
public struct CommandContext: Sendable {
    /// Results (events, reports): standard output.
    public var standardOutput: any TextSink
    /// Diagnostics: standard error.
    public var standardError: any TextSink
    /// The environment variables.
    public var environment: [String: String]
    /// A logger on ``standardError``, labelled with the command's name.
    public var logger: Logger

    /// Creates a context.
    public init(
        standardOutput: any TextSink, standardError: any TextSink, environment: [String: String] = [:],
        logger: Logger? = nil
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.environment = environment
        let level = environment["KINESIA_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        self.logger = logger ?? Logger(label: "kinesia", level: level, sink: standardError)
    }
}
