import KinesiaClient
import KinesiaControl
import KinesiaCoordinator
import KinesiaPublishJournal
import KinesiaService
import KinesiaSystem

/// `kinesia coordinator`: the control plane's one address, beside the broker
/// (``CoordinatorService``).
///
/// ```text
/// $ kinesia coordinator --bus /run/kinesia
/// coordinating on ipc:///run/kinesia/control.sock with 0 session(s) kept in ~/.local/state/kinesia/bus-_run_kinesia/coordinator.db
/// ```
public struct CoordinatorCommand: ParsableCommand {
    /// `coordinator`, with its help.
    public static let configuration = CommandConfiguration(
        name: "coordinator",
        summary: "Keep the site's sessions and place them on pool workers (kinesia session, worker --pool).",
        discussion: """
            Binds control.sock in the bus directory. kinesia session start|stop|reset|list sends it \
            commands; kinesia worker --pool NAME workers report to it every second and get their \
            sessions from it. The sessions wanted (the desired state) are kept in \
            STATE/coordinator.db (SQLite), so a restarted coordinator brings them back; where they \
            run is learned again from the workers' reports. A worker silent for --lease seconds \
            (default 3) is gone: its sessions go to another live worker of its pool. On a TCP bus \
            it binds the port after the broker's two (PORT+2) behind the broker's CURVE key \
            (--key broker.key) and allowed keys (--allowed DIR): keys of the control role may \
            command sessions, keys of the worker role may report; or --insecure.
            """)

    /// The options.
    public static var arguments: [Argument<CoordinatorCommand>] {
        [
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "coordinator"),
            .option(
                "state", \.state, valueName: "dir",
                help: "The state directory (default: the journals' default state directory of the bus)."),
            .option(
                "lease", \.lease, valueName: "seconds",
                help: "How long a pool worker may be silent before its sessions go elsewhere."),
            .option(
                "key", \.security.key, valueName: "file.key",
                help:
                    "On a TCP bus: the broker's secret key (the coordinator is beside the broker; default: $KINESIA_KEY)."
            ),
            .option(
                "allowed", \.allowed, valueName: "dir",
                help: "On a TCP bus: the broker's allowed keys (control/ may command, worker/ may report)."),
            BusSecurityOptions.insecureArgument(\.security),
        ]
    }

    /// `--bus`.
    public var bus: String?
    /// `--name`.
    public var name: String?
    /// `--state`.
    public var state: String?
    /// `--lease`.
    public var lease = 3.0
    /// `--key`, `--insecure`.
    var security = BusSecurityOptions()
    /// `--allowed`.
    public var allowed: String?

    /// A command with every default.
    public init() {}

    /// Checks `--lease`.
    public func validate() throws(CLIError) {
        guard lease >= 0.5, lease <= 600 else { throw CLIError.usage("--lease takes 0.5 to 600 seconds") }
    }

    /// Runs the coordinator until a signal.
    public func run(context: CommandContext) async throws {
        let bus = try BusProcess.bus(bus, environment: context.environment)
        let name = try BusProcess.processName(name, environment: context.environment, fallback: "coordinator")
        var journal = JournalOptions()
        journal.state = state
        let stateDirectory = try CLIError.from { () throws(PublishJournalError) in
            try journal.stateDirectory(environment: context.environment, bus: bus.description)
        }
        let lease = Duration.seconds(double: lease)
        let mode = try BrokerSecurity.resolveAndTell(
            bus: bus, options: security, allowed: allowed, context: context, endpoints: bus.controlEndpoint)
        let service = CoordinatorService(
            .init(
                process: BusProcessIdentity(bus: bus, name: name, insecure: mode == .insecure),
                stateDirectory: stateDirectory, core: .init(lease: lease, startGrace: lease), security: mode),
            log: context.logger)
        try await BusProcess.run(context: context, thread: "coordinator") { stop in
            try service.run(until: stop)
        }
    }
}
