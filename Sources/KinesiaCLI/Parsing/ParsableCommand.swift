/// The name and help of a command.
public struct CommandConfiguration: Sendable {
    /// The subcommand's name (`analyze` in `kinesia analyze`).
    public var name: String
    /// One line for `kinesia help`.
    public var summary: String
    /// More text for `kinesia <command> --help`, after the summary; may be empty.
    public var discussion: String

    /// Creates a configuration.
    public init(name: String, summary: String, discussion: String = "") {
        self.name = name
        self.summary = summary
        self.discussion = discussion
    }
}

/// A `kinesia` subcommand: a value type whose properties are its options, with their defaults.
///
/// Parsing is pure (``parse(_:)``), validation is separate (``validate()``), and ``run(context:)``
/// does the work, writing to the context's outputs. Errors go to the one funnel in
/// ``Kinesia/main(_:context:)``. Adding a command is one file with a type like this and one line
/// in ``Kinesia/commands``.
///
/// ```swift
/// struct GreetCommand: ParsableCommand {
///     static let configuration = CommandConfiguration(name: "greet", summary: "Say hello.")
///     static var arguments: [Argument<GreetCommand>] {
///         [.option("name", \.name, help: "Who to greet.")]
///     }
///     var name = "world"
///     func run(context: CommandContext) async throws {
///         context.standardOutput.write("hello \(name)\n")
///     }
/// }
/// ```
public protocol ParsableCommand: Sendable {
    /// Name and help.
    static var configuration: CommandConfiguration { get }
    /// The options, flags and positionals, in help order (positionals in command-line order).
    static var arguments: [Argument<Self>] { get }
    /// The command with every default.
    init()
    /// Checks the parsed values together (ranges, combinations).
    /// - Throws: ``CLIError/usage(_:)`` when the combination is invalid.
    func validate() throws(CLIError)
    /// Does the work.
    /// - Throws: ``CLIError``, ``ExitStatus``, or any error (reported as a failure, exit 1).
    func run(context: CommandContext) async throws
}

extension ParsableCommand {
    /// No checks by default.
    public func validate() throws(CLIError) {}

    /// Parses the arguments after the subcommand's name (pure: no I/O).
    /// - Throws: ``CLIError/help(_:)`` for `--help`/`-h`, ``CLIError/usage(_:)`` for anything wrong.
    public static func parse(_ arguments: [String]) throws(CLIError) -> Self {
        try ArgumentParser.parse(arguments, as: Self.self)
    }

    /// The one-line usage: `kinesia analyze <file> --exercise <id> [--format <format>] ...`.
    public static var usage: String { HelpFormatter.usage(for: Self.self) }

    /// The full help text of `kinesia <command> --help`.
    public static var helpText: String { HelpFormatter.help(for: Self.self) }
}
