import KinesiaClient
import KinesiaService
import KinesiaWire

extension BrokerSecurity {
    /// The environment variable of `--allowed`.
    static let allowedVariable = "KINESIA_ALLOWED"

    /// The broker's mode.
    /// - Throws: ``CLIError/usage(_:)`` for `--insecure` with `--key`, ``CLIError/failure(_:)``
    ///   for a TCP bus without a key or `--insecure`, and a key that cannot be used.
    static func resolve(
        bus: BusAddress, options: BusSecurityOptions, allowed: String?, environment: [String: String]
    ) throws(CLIError) -> BrokerSecurity {
        guard case .tcp = bus.kind else { return .localUser }
        let options = options.resolved(environment: environment)
        if options.insecure {
            guard options.key == nil else {
                throw CLIError.usage("--insecure contradicts --key: give a key or --insecure")
            }
            return .insecure
        }
        guard let keyPath = options.key else {
            throw CLIError.failure(
                "a broker on the TCP bus \(bus) needs its key: --key broker.key (make it with: "
                    + "kinesia keys new broker --role broker) and the clients' keys in --allowed DIR; "
                    + "or --insecure to carry patients' data in clear text for anyone who reaches the port")
        }
        let key: BusKey
        do {
            key = try BusKey.load(keyPath, role: .broker)
        } catch {
            throw CLIError.failure(error.description)
        }
        let directory =
            allowed ?? environment[allowedVariable].flatMap { $0.isEmpty ? nil : $0 }
            ?? KeysCommand.directory(nil, environment: environment) + "/allowed"
        return .curve(key, allowedDirectory: directory)
    }

    /// ``resolve(bus:options:allowed:environment:)``, saying what it chose on `context`'s log:
    /// a warning when insecure, the key and allowed keys with CURVE (on `endpoints`).
    /// - Throws: As ``resolve(bus:options:allowed:environment:)``.
    static func resolveAndTell(
        bus: BusAddress, options: BusSecurityOptions, allowed: String?, context: CommandContext,
        endpoints: String
    ) throws(CLIError) -> BrokerSecurity {
        let mode = try resolve(bus: bus, options: options, allowed: allowed, environment: context.environment)
        switch mode {
        case .insecure: context.logger.warning(BusSecurityOptions.insecureWarning(bus))
        case .curve(let key, let directory):
            context.logger.info("CURVE on \(endpoints): server key \(key.name), allowed keys in \(directory)")
        case .localUser: break
        }
        return mode
    }
}
