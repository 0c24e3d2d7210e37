import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaService
public import KinesiaWire

/// `kinesia keys`: makes CURVE key pairs for the bus and manages the broker's allowed keys.
///
/// - `keys new NAME --role ROLE`: `DIR/NAME.key` (secret, mode 0600) and `DIR/NAME.pub`;
/// - `keys allow FILE.pub`: copies a public key into `DIR/allowed/<role>/NAME.pub`, where the
///   broker (`--allowed DIR/allowed`) finds it at the next connection;
/// - `keys revoke NAME --role ROLE`: removes `DIR/allowed/<role>/NAME.pub`;
/// - `keys list`: the keys of `DIR` and the allowed keys, with their roles.
///
/// `DIR` is `--dir`, else `$KINESIA_KEYS`, else `${XDG_CONFIG_HOME:-~/.config}/kinesia/keys`.
public struct KeysCommand: ParsableCommand {
    /// What to do.
    public enum Action: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Make a key pair.
        case new
        /// Allow a public key on this box's broker.
        case allow
        /// Remove an allowed key.
        case revoke
        /// List keys.
        case list
    }

    /// `keys`, with its help.
    public static let configuration = CommandConfiguration(
        name: "keys", summary: "Make bus keys (CURVE) and manage the keys the broker allows.",
        discussion: """
            keys new NAME --role ROLE writes DIR/NAME.key (secret, mode 0600) and DIR/NAME.pub. \
            keys allow FILE.pub copies a public key to DIR/allowed/<role>/NAME.pub (the broker's \
            --allowed directory, read again at every connection: allow a new key before revoking \
            the old one to rotate without stopping). keys revoke NAME --role ROLE removes it. \
            keys list shows both. DIR: --dir, else $KINESIA_KEYS, else \
            ${XDG_CONFIG_HOME:-~/.config}/kinesia/keys.
            """)

    /// The arguments.
    public static var arguments: [Argument<KeysCommand>] {
        [
            .positional("action", \.action, help: "new, allow, revoke or list."),
            .positional("name", \.subject, help: "The key's name (new, revoke), or a .pub file (allow)."),
            .option(
                "role", \.role, valueName: "role",
                help: "The key's role (new, revoke; allow checks the file's)."),
            .option(
                "dir", \.directory, valueName: "dir",
                help: "The keys directory (default: $KINESIA_KEYS, else ~/.config/kinesia/keys)."),
        ]
    }

    /// The action.
    public var action = Action.list
    /// The key's name or file.
    public var subject: String?
    /// `--role`.
    public var role: BusRole?
    /// `--dir`.
    public var directory: String?

    /// A command with every default.
    public init() {}

    /// Checks that the action has what it needs.
    public func validate() throws(CLIError) {
        switch action {
        case .new, .revoke:
            guard let subject else { throw CLIError.usage("keys \(action.rawValue) needs a NAME") }
            guard Topic.isValidName(subject) else {
                throw CLIError.usage(Topic.invalidNameMessage(subject, role: "key name"))
            }
            guard role != nil else {
                throw CLIError.usage("keys \(action.rawValue) needs --role (one of: \(BusRole.choices))")
            }
        case .allow:
            guard subject != nil else { throw CLIError.usage("keys allow needs a FILE.pub") }
        case .list:
            guard subject == nil else { throw CLIError.usage("keys list takes no name") }
        }
    }

    /// The keys directory.
    static func directory(_ option: String?, environment: [String: String]) -> String {
        if let option {
            return option.hasPrefix("/") ? option : FileManager.default.currentDirectoryPath + "/" + option
        }
        if let value = environment["KINESIA_KEYS"], value.hasPrefix("/") { return value }
        return BusKey.defaultDirectory(environment: environment)
    }

    /// Does the action.
    public func run(context: CommandContext) async throws {
        let directory = Self.directory(directory, environment: context.environment)
        let output = context.standardOutput
        do {
            switch action {
            case .new:
                let key = BusKey(name: subject!, role: role!, keyPair: try CurveKeyPair.generate())
                let (secret, publicPath) = try key.write(to: directory)
                output.write("\(secret)\n\(publicPath)\n")
                context.logger.info(
                    "made the \(key.role) key \(key.name): keep \(secret) on this box; give \(publicPath) to "
                        + "the broker's operator (kinesia keys allow)")
            case .allow:
                let key = try BusPublicKey.load(subject!)
                if let role, role != key.role {
                    throw CLIError.failure(
                        "\(subject!) is \(key.role.withArticle) key, not \(role.withArticle) key")
                }
                let path = try AllowedKeys.allow(key, in: directory + "/allowed")
                output.write("\(path)\n")
                context.logger.info(
                    "allowed the \(key.role) key \(key.name): the broker admits it at its next connection")
            case .revoke:
                let path = try AllowedKeys.revoke(name: subject!, role: role!, in: directory + "/allowed")
                output.write("\(path)\n")
                context.logger.info(
                    "revoked \(subject!): new connections with it are refused; connections open now stay "
                        + "until they close (restart the broker to cut them)")
            case .list:
                output.write(Self.listing(directory: directory).joined(separator: "\n") + "\n")
            }
        } catch let error as BusKeyError {
            throw CLIError.failure(error.description)
        }
    }

    /// The lines of `keys list`: own keys, then allowed keys by role.
    static func listing(directory: String) -> [String] {
        var lines = ["keys in \(directory):"]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() where name.hasSuffix(".pub") {
            if let key = try? BusPublicKey.load(directory + "/" + name) {
                let secret =
                    names.contains(String(name.dropLast(4)) + ".key") ? "secret+public" : "public only"
                lines.append("  \(key.name)  \(key.role)  \(key.key)  (\(secret))")
            }
        }
        let allowed = AllowedKeys.load(directory: directory + "/allowed")
        lines.append("allowed by the broker (\(directory)/allowed):")
        for entry in allowed.entries.sorted(by: {
            ($0.value.role.rawValue, $0.value.name) < ($1.value.role.rawValue, $1.value.name)
        }) {
            lines.append("  \(entry.value.role)/\(entry.value.name)  \(entry.key)")
        }
        lines += allowed.problems.map { "  \($0)" }
        return lines
    }
}

extension BusRole: ExpressibleByArgument {
    /// The raw value (`ingest`...).
    public var argumentDescription: String { rawValue }
}
