import KinesiaClient
import KinesiaService
import KinesiaWire

/// `--key`, `--server-key` and `--insecure`: how a command proves itself on a TCP bus.
///
/// Over TCP a client needs its own secret key (`--key NAME.key`, of the command's role) and the
/// broker's public key (`--server-key broker.pub`); without them it refuses to start unless
/// `--insecure` is given, and then it says so at every start. The environment gives the same:
/// `KINESIA_KEY`, `KINESIA_SERVER_KEY`, `KINESIA_INSECURE=1` (for `kinesia up` topologies and
/// systemd units). On a bus directory (IPC) keys are not used: the broker checks the user id.
struct BusSecurityOptions: Hashable, Sendable {
    /// `--key`: this process's secret key file.
    var key: String?
    /// `--server-key`: the broker's public key file (clients only).
    var serverKey: String?
    /// `--insecure`: allow a TCP bus without keys.
    var insecure = false

    /// The environment variable of `--key`.
    static let keyVariable = "KINESIA_KEY"
    /// The environment variable of `--server-key`.
    static let serverKeyVariable = "KINESIA_SERVER_KEY"
    /// The environment variable of `--insecure` (`1`, `true` or `yes`).
    static let insecureVariable = "KINESIA_INSECURE"

    /// The arguments of a client command (`--key`, `--server-key`, `--insecure`).
    static func clientArguments<Command>(_ keyPath: WritableKeyPath<Command, BusSecurityOptions>)
        -> [Argument<Command>]
    {
        [
            keyArgument(keyPath),
            .option(
                "server-key", keyPath.appending(path: \.serverKey), valueName: "file.pub",
                help: "The broker's public key, for a TCP bus (default: $\(serverKeyVariable))."),
            insecureArgument(keyPath),
        ]
    }

    /// `--key`.
    static func keyArgument<Command>(_ keyPath: WritableKeyPath<Command, BusSecurityOptions>) -> Argument<
        Command
    > {
        .option(
            "key", keyPath.appending(path: \.key), valueName: "file.key",
            help: "This process's secret key (kinesia keys new), for a TCP bus (default: $\(keyVariable)).")
    }

    /// `--insecure`.
    static func insecureArgument<Command>(_ keyPath: WritableKeyPath<Command, BusSecurityOptions>)
        -> Argument<Command>
    {
        .flag(
            "insecure", keyPath.appending(path: \.insecure),
            help:
                "Allow a TCP bus without keys: no encryption, no authentication (or $\(insecureVariable)=1).")
    }

    /// The options with the environment's values where the command line gave none.
    func resolved(environment: [String: String]) -> BusSecurityOptions {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        var resolved = self
        resolved.key = key ?? value(Self.keyVariable)
        resolved.serverKey = serverKey ?? value(Self.serverKeyVariable)
        if !insecure, let flag = value(Self.insecureVariable) {
            resolved.insecure = ["1", "true", "yes"].contains(flag.lowercased())
        }
        return resolved
    }

    /// What a client of `role` uses on `bus`: its credentials (TCP with keys), or `nil` (IPC, or
    /// TCP with `--insecure`).
    /// - Throws: ``CLIError/usage(_:)`` for contradicting options, ``CLIError/failure(_:)`` for a
    ///   TCP bus without keys or `--insecure`, and for a key file that cannot be used (missing,
    ///   not private, malformed, of another role).
    func clientCredentials(bus: BusAddress, role: BusRole) throws(CLIError) -> BusCredentials? {
        guard case .tcp = bus.kind else { return nil }
        if insecure {
            guard key == nil, serverKey == nil else {
                throw CLIError.usage("--insecure contradicts --key and --server-key: give keys or --insecure")
            }
            return nil
        }
        guard let key else {
            throw CLIError.failure(
                "the TCP bus \(bus) needs keys: --key NAME.key (\(role.withArticle) key) and --server-key broker.pub "
                    + "(make them with: kinesia keys new NAME --role \(role)); or --insecure to send "
                    + "patients' data in clear text to anyone who reaches the port")
        }
        guard let serverKey else {
            throw CLIError.failure(
                "the TCP bus \(bus) needs the broker's public key: --server-key broker.pub "
                    + "(or $\(Self.serverKeyVariable))")
        }
        do {
            return BusCredentials(
                key: try BusKey.load(key, role: role),
                serverKey: try BusPublicKey.load(serverKey, role: .broker))
        } catch {
            throw CLIError.failure(error.description)
        }
    }

    /// The warning every start of an insecure TCP process logs.
    static func insecureWarning(_ bus: BusAddress) -> String {
        "INSECURE: the TCP bus \(bus) runs without keys (--insecure): no encryption and no "
            + "authentication; anyone who reaches the port can read and publish patients' data"
    }
}

extension BusProcess {
    /// The bus of a client command (`ingest`, `worker`, `listen`, `watch`, `status`), made ready,
    /// with its credentials over TCP (see ``BusSecurityOptions``).
    /// - Returns: The bus, and whether it runs insecure (TCP with `--insecure`; logged).
    /// - Throws: ``CLIError``.
    static func bus(
        _ option: String?, security: BusSecurityOptions, role: BusRole, context: CommandContext
    ) throws(CLIError) -> (bus: BusAddress, insecure: Bool) {
        var bus = try bus(option, environment: context.environment)
        let security = security.resolved(environment: context.environment)
        bus.credentials = try security.clientCredentials(bus: bus, role: role)
        let insecure: Bool
        if case .tcp = bus.kind, bus.credentials == nil {
            insecure = true
            context.logger.warning(BusSecurityOptions.insecureWarning(bus))
        } else {
            insecure = false
        }
        if let credentials = bus.credentials {
            context.logger.info("bus \(bus): CURVE, \(credentials)")
        }
        return (bus, insecure)
    }
}
