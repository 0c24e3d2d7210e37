import KinesiaBroker
import KinesiaClient
import KinesiaService

/// `kinesia broker`: the XSUB/XPUB proxy every other process connects to.
///
/// Publishers connect to its frontend, subscribers to its backend (see ``BusAddress``); it
/// forwards messages down and subscriptions up. It publishes its statistics on
/// `health/broker/` about once a second, refuses to start when another broker serves the same
/// directory, and stops on SIGINT or SIGTERM with status 0, removing the socket files it bound
/// (never one put there since).
public struct BrokerCommand: ParsableCommand {
    /// `broker`, with its help.
    public static let configuration = CommandConfiguration(
        name: "broker", summary: "Run the bus: the proxy between publishers and subscribers.",
        discussion: """
            Binds the frontend (publishers) and the backend (subscribers) of the bus: \
            DIR/pub.sock and DIR/sub.sock, or tcp://HOST:PORT and PORT+1. With keys (--key), \
            also the replay port PORT+3, through which journaling processes serve replay and \
            clients ask for it, behind the same keys and roles. Only one broker may \
            serve a directory (DIR/broker.lock). Publishes its counters on health/<name>/ \
            every second. Stops on SIGINT or SIGTERM.
            """)

    /// The options.
    public static var arguments: [Argument<BrokerCommand>] {
        [
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "broker"),
            .option(
                "hwm", \.highWaterMark, valueName: "n",
                help:
                    "Messages queued per connection before the broker drops (both sides); with frames "
                    + "of at most 16 KiB, a queue holds at most this x 16 KiB."),
            BusSecurityOptions.keyArgument(\.security),
            .option(
                "allowed", \.allowed, valueName: "dir",
                help: "The allowed public keys, DIR/<role>/*.pub, read again at every connection "
                    + "(default: $KINESIA_ALLOWED, else ~/.config/kinesia/keys/allowed)."),
            BusSecurityOptions.insecureArgument(\.security),
        ]
    }

    /// `--bus`.
    public var bus: String?
    /// `--name`.
    public var name: String?
    /// `--hwm`.
    public var highWaterMark = 10_000
    /// `--key`, `--insecure` (`--server-key` is the clients').
    var security = BusSecurityOptions()
    /// `--allowed`.
    public var allowed: String?

    /// A command with every default.
    public init() {}

    /// Checks `--hwm`.
    public func validate() throws(CLIError) {
        guard (1...10_000_000).contains(highWaterMark) else {
            throw CLIError.usage("--hwm must be 1...10000000, got \(highWaterMark)")
        }
    }

    /// Serves the bus until a signal.
    public func run(context: CommandContext) async throws {
        let bus = try BusProcess.bus(bus, environment: context.environment)
        let name = try BusProcess.processName(name, environment: context.environment, fallback: "broker")
        let highWaterMark = Int32(highWaterMark)
        let mode = try BrokerSecurity.resolveAndTell(
            bus: bus, options: security, allowed: allowed, context: context, endpoints: "every TCP endpoint")
        let service = BrokerService(
            BrokerService.Configuration(bus: bus, security: mode, name: name, highWaterMark: highWaterMark),
            log: context.logger)
        try await BusProcess.run(context: context, thread: "broker") { stop in try service.run(until: stop) }
    }
}
