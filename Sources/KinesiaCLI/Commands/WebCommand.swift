import Foundation
import KinesiaClient
import KinesiaService
import KinesiaSystem
public import KinesiaWeb
import KinesiaWire

/// `kinesia web [--listen HOST:PORT] [--tokens DIR]`: the HTTP gateway of the bus for
/// applications and monitoring (``WebService``); `kinesia web token new|revoke|list NAME`
/// manages its access tokens (``WebTokens``).
public struct WebCommand: ParsableCommand {
    /// `token` (manage tokens), or nothing (serve).
    public enum Mode: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Manage the access tokens.
        case token
    }

    /// What `token` does.
    public enum TokenAction: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Make a token (printed once, on the last line).
        case new
        /// Remove one.
        case revoke
        /// Show their names and roles.
        case list
    }

    /// `web`, with its help.
    public static let configuration = CommandConfiguration(
        name: "web", summary: "Serve the bus over HTTP: sessions, processes and Prometheus metrics.",
        discussion: """
            Follows every session's snapshots and runs and every process's health/ report live, \
            and answers GET /api/v1/sessions, GET /api/v1/processes (JSON), GET /metrics \
            (Prometheus text), the live dashboard (/), a session's server-sent events, a \
            therapist's commands, and with --db (kinesia record's database) the runs and their \
            reports on --listen (default 127.0.0.1:8080; an IPv4 address of a \
            loopback interface, or any address with --tls-cert and --tls-key: HTTPS). Every \
            request needs a token: Authorization: Bearer TOKEN. web token new NAME --role \
            viewer|therapist prints a new token on its last line (kept hashed in --tokens DIR, \
            default ~/.config/kinesia/web-tokens); web token revoke NAME removes it (refused \
            within a second); web token list shows them. Counters (served, unauthorized, \
            notFound, connections) on health/<name>/. Stops on SIGINT/SIGTERM. The API: \
            docs/http-api.md.
            """)

    /// The options.
    public static var arguments: [Argument<WebCommand>] {
        [
            .positional("mode", \.mode, help: "token, to manage the access tokens; nothing to serve."),
            .positional("action", \.action, help: "With token: new, revoke or list."),
            .positional("name", \.tokenName, help: "With token new or revoke: the token's name."),
            .option(
                "listen", \.listen, valueName: "host:port",
                help:
                    "The loopback IPv4 address and port to serve on (default 127.0.0.1:8080; port 0: any free port)."
            ),
            .option(
                "tokens", \.tokens, valueName: "dir",
                help: "The tokens' private directory (default ~/.config/kinesia/web-tokens)."),
            .option(
                "role", \.role, valueName: "viewer|therapist", help: "With token new: what the token may do."),
            .option(
                "tls-cert", \.certificate, valueName: "file",
                help:
                    "A certificate (PEM, with its chain): serve HTTPS only; needed for an address other than loopback."
            ),
            .option("tls-key", \.key, valueName: "file", help: "The certificate's private key (PEM)."),
            .option(
                "client-timeout", \.clientTimeout, valueName: "seconds",
                help:
                    "Close a connection after this many seconds without traffic (a client that never finishes its request or stops reading)."
            ),
            .option(
                "db", \.database, valueName: "file",
                help: "kinesia record's database, read only: the runs (/api/v1/runs) and their reports."),
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "web"),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// The first positional.
    public var mode: Mode?
    /// The second positional.
    public var action: TokenAction?
    /// The third positional.
    public var tokenName: String?
    /// `--listen`.
    public var listen = "127.0.0.1:8080"
    /// `--tokens`.
    public var tokens: String?
    /// `--role`.
    public var role: WebTokens.Role?
    /// `--db`.
    public var database: String?
    /// `--tls-cert`.
    public var certificate: String?
    /// `--tls-key`.
    public var key: String?
    /// `--client-timeout`.
    public var clientTimeout = 30
    /// `--bus`.
    public var bus: String?
    /// `--name`.
    public var name: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()

    /// A command with every default.
    public init() {}

    /// The host and port of `--listen`.
    static func address(_ listen: String) throws(CLIError) -> (host: String, port: UInt16) {
        let parts = listen.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]) else {
            throw CLIError.usage("--listen needs HOST:PORT (e.g. 127.0.0.1:8080), not '\(listen)'")
        }
        let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard octets.count == 4 else {
            throw CLIError.usage("--listen needs an IPv4 address (e.g. 127.0.0.1), not '\(parts[0])'")
        }
        return (String(parts[0]), port)
    }

    /// Whether `host` is a loopback address (127.x.x.x).
    static func isLoopback(_ host: String) -> Bool { host.hasPrefix("127.") }

    /// Checks the mode, the action, the name and the address.
    public func validate() throws(CLIError) {
        switch mode {
        case nil:
            guard action == nil, tokenName == nil else {
                throw CLIError.usage("web takes no arguments (web token ...?)")
            }
            let (host, _) = try Self.address(listen)
            guard (1...3600).contains(clientTimeout) else {
                throw CLIError.usage("--client-timeout must be 1 to 3600 seconds")
            }
            guard (certificate == nil) == (key == nil) else {
                throw CLIError.usage("--tls-cert and --tls-key go together")
            }
            guard Self.isLoopback(host) || certificate != nil else {
                throw CLIError.usage(
                    "--listen \(listen): an address other than loopback (127.x.x.x) needs --tls-cert and --tls-key: "
                        + "tokens must not cross a network in clear text")
            }
        case .token:
            guard let action else { throw CLIError.usage("web token needs new, revoke or list") }
            switch action {
            case .new, .revoke:
                guard let tokenName else { throw CLIError.usage("web token \(action.rawValue) needs a NAME") }
                guard WebTokens.isValidName(tokenName) else {
                    throw CLIError.usage(WebTokenError.invalidName(tokenName).description)
                }
                if action == .new, role == nil {
                    throw CLIError.usage("web token new needs --role viewer|therapist")
                }
            case .list:
                guard tokenName == nil else { throw CLIError.usage("web token list takes no name") }
            }
        }
    }

    static func tokensDirectory(_ option: String?, environment: [String: String]) -> String {
        if let option {
            return option.hasPrefix("/") ? option : FileManager.default.currentDirectoryPath + "/" + option
        }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/kinesia/web-tokens"
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return home + "/.config/kinesia/web-tokens"
    }

    /// Serves, or manages the tokens.
    public func run(context: CommandContext) async throws {
        let directory = Self.tokensDirectory(tokens, environment: context.environment)
        if mode == .token {
            do {
                let store = try WebTokens(directory: directory)
                switch action! {
                case .new:
                    let token = try store.issue(name: tokenName!, role: role!)
                    context.logger.info(
                        "made the \(role!.rawValue) token \(tokenName!) (kept hashed in \(directory)); it is shown once:"
                    )
                    context.standardOutput.write(token + "\n")
                case .revoke:
                    try store.revoke(name: tokenName!)
                    context.standardOutput.write("revoked \(tokenName!)\n")
                case .list:
                    let snapshot = store.load()
                    let lines = snapshot.grants.values.sorted { $0.name < $1.name }.map {
                        "\($0.name)  \($0.role.rawValue)"
                    }
                    context.standardOutput.write((lines + snapshot.problems).map { $0 + "\n" }.joined())
                }
            } catch {
                throw CLIError.failure("kinesia web token: \(error)")
            }
            return
        }
        let (host, port) = try Self.address(listen)
        var limits = HTTPServer.Limits()
        limits.idleTimeout = UInt32(clientTimeout)
        var tls: HTTPServer.TLS?
        if let certificate, let key {
            do {
                tls = HTTPServer.TLS(
                    certificate: try String(contentsOfFile: certificate, encoding: .utf8),
                    key: try String(contentsOfFile: key, encoding: .utf8))
            } catch {
                throw CLIError.failure(
                    "kinesia web: cannot read the certificate or its key: \(error.localizedDescription)")
            }
        }
        let (bus, insecure) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment,
            fallback: BusProcess.derivedName("web", "\(ProcessIdentity.id)"))
        let service = WebService(
            WebService.Configuration(
                process: BusProcessIdentity(bus: bus, name: name, insecure: insecure), host: host, port: port,
                tokens: directory, limits: limits, database: database, tls: tls),
            log: context.logger)
        do {
            try await BusProcess.run(context: context, thread: "web") { stop in try service.run(until: stop) }
        } catch let error as WebServiceError {
            switch error {
            case .server, .tokens: throw CLIError.failure("kinesia web: \(error)")
            case .bus, .processName: throw error
            }
        }
    }
}

extension WebTokens.Role: ExpressibleByArgument {
    /// The role's name.
    public var argumentDescription: String { rawValue }
}
