import KinesiaService
import KinesiaSupervisor

/// `kinesia up FILE`: starts a whole topology (broker, ingests, workers, consumers) from a file
/// and supervises it until SIGINT, SIGTERM or SIGHUP.
///
/// The work is ``runUp(topologyPath:kinesiaExecutable:log:)``; this type is its command line.
/// Every line goes to standard error at once (flushed), one per action.
public struct UpCommand: ParsableCommand {
    /// `up`, with its help.
    public static let configuration = CommandConfiguration(
        name: "up", summary: "Start a whole topology from a file and supervise it.",
        discussion: """
            FILE is a JSON topology (see deploy/README.md; deploy/local.json is the one-box example): \
            the processes, each a kinesia command line with a restart policy (always, on-failure, \
            never) and a role (broker, ingest, worker, consumer), the bus, the shutdown deadline and \
            the restart limits.
            Starts the brokers first and the ingests last; restarts a process that dies after a \
            growing delay, and gives up on it after too many restarts within the window; prints one \
            line per action on standard error.
            SIGINT, SIGTERM or SIGHUP stop everything gracefully in drain order: ingests, workers, \
            consumers, brokers, each with SIGTERM then SIGKILL after the deadline. A second SIGINT \
            (Control-C again) kills everything at once.
            A process that exits with status 64 (a usage error) is not restarted: fix its command.
            Exit status: 0 after a graceful shutdown; 1 for an invalid file, or when a process was \
            given up, failed with restart "never" or with a usage error, or a broker stopped for good.
            """)

    /// The topology file.
    public static var arguments: [Argument<UpCommand>] {
        [.positional("file", \.file, help: "A topology file, e.g. deploy/local.json.")]
    }

    /// The topology file.
    public var file = ""

    /// A command with every default.
    public init() {}

    /// Runs the topology; throws ``ExitStatus`` with the supervisor's status when it is not 0
    /// (the lines already say why).
    public func run(context: CommandContext) async throws {
        let output = context.standardError
        let status = await runUp(topologyPath: file) { line in
            output.write(line + "\n")
            output.flush()
        }
        if status != 0 { throw ExitStatus(status) }
    }
}
