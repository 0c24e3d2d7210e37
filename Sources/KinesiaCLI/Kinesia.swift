import Foundation
import KinesiaCueConsumers
import KinesiaJSON
import KinesiaMotion
import KinesiaService

/// The `kinesia` executable: finds the subcommand, parses it, runs it, and turns every outcome
/// into text and an exit status in one place.
///
/// - `kinesia help`, `kinesia --help`: the list of commands, on standard output, status 0;
/// - `kinesia help <command>`, `kinesia <command> --help`: that command's help, status 0;
/// - a usage error (unknown command, option or value; missing option): the message, the usage
///   line and a hint on standard error, status 64;
/// - a failure while running: `kinesia <command>: error: ...` on standard error, status 1.
public enum Kinesia {
    /// Runs the process: standard outputs, the process environment.
    /// - Parameter arguments: The arguments after the executable's name.
    /// - Returns: The exit status.
    public static func main(_ arguments: [String]) async -> Int32 {
        let context = CommandContext(
            standardOutput: FileDescriptorSink.standardOutput,
            standardError: FileDescriptorSink.standardError,
            environment: ProcessInfo.processInfo.environment)
        let status = await main(arguments, context: context)
        context.standardOutput.flush()
        context.standardError.flush()
        return status
    }

    /// Runs one command line in `context` (tests call this in-process).
    /// - Parameters:
    ///   - arguments: The arguments after the executable's name.
    ///   - context: Outputs and environment.
    /// - Returns: The exit status: 0, 64 for usage errors, 1 for failures (or a command's own).
    public static func main(_ arguments: [String], context: CommandContext) async -> Int32 {
        guard let first = arguments.first else {
            return report(
                .usage("missing command; valid commands: \(commandNames)"), usage: usage, context: context)
        }
        if first == "help" || first == "--help" || first == "-h" {
            let rest = arguments.dropFirst()
            guard let name = rest.first, first == "help" else {
                return report(.help(helpText), usage: usage, context: context)
            }
            guard let command = command(named: name) else {
                return report(
                    .usage("unknown command \(name.quotedExcerpt()); valid commands: \(commandNames)"),
                    usage: usage,
                    context: context)
            }
            return report(.help(command.helpText), usage: command.usage, context: context)
        }
        guard let command = command(named: first) else {
            return report(
                .usage("unknown command \(first.quotedExcerpt()); valid commands: \(commandNames)"),
                usage: usage,
                context: context)
        }
        var commandContext = context
        commandContext.logger.label = "kinesia \(command.configuration.name)"
        return await run(command, Array(arguments.dropFirst()), context: commandContext)
    }

    private static func run<Command: ParsableCommand>(
        _ type: Command.Type, _ arguments: [String], context: CommandContext
    ) async -> Int32 {
        do {
            let command = try Command.parse(arguments)
            try command.validate()
            try await command.run(context: context)
            return 0
        } catch let error as CLIError {
            return report(error, usage: Command.usage, context: context, command: Command.configuration.name)
        } catch let status as ExitStatus {
            return status.code
        } catch let error as any ServiceError {
            return report(
                CLIError(error), usage: Command.usage, context: context, command: Command.configuration.name)
        } catch {
            return report(
                .failure(String(describing: error)), usage: Command.usage, context: context,
                command: Command.configuration.name)
        }
    }

    @discardableResult
    private static func report(
        _ error: CLIError, usage: String, context: CommandContext, command: String? = nil
    ) -> Int32 {
        let prefix = command.map { "kinesia \($0)" } ?? "kinesia"
        switch error {
        case .help(let text):
            context.standardOutput.write(text.hasSuffix("\n") ? text : text + "\n")
        case .usage(let message):
            let hint = command.map { "kinesia \($0) --help" } ?? "kinesia help"
            context.standardError.write(
                "\(prefix): error: \(message.escapingControlCharacters)\nUSAGE: \(usage)\nSee '\(hint)'.\n")
        case .failure(let message):
            context.standardError.write("\(prefix): error: \(message.escapingControlCharacters)\n")
        }
        return error.exitStatus
    }

    static func command(named name: String) -> (any ParsableCommand.Type)? {
        commands.first { $0.configuration.name == name }
    }

    private static var commandNames: String {
        commands.map { $0.configuration.name }.joined(separator: ", ")
    }

    /// The top-level usage line.
    static let usage = "kinesia <command> [options]"

    /// The text of `kinesia help`.
    public static var helpText: String {
        var out =
            "USAGE: \(usage)\n\nKinesia Motion: physiotherapy motion analysis from 2D poses.\n\nCOMMANDS:\n"
        for command in commands {
            out += HelpFormatter.row(command.configuration.name, command.configuration.summary)
        }
        out += HelpFormatter.row("help [<command>]", "Show this help, or a command's help.")
        out += "\nSee 'kinesia help <command>' or 'kinesia <command> --help' for a command's options.\n"
        return out
    }
}
