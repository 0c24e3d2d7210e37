import Foundation
import KinesiaClient
import KinesiaService
import KinesiaSystem
import KinesiaWire
import Synchronization

/// What the bus commands share: running their blocking socket loop on a thread of its own
/// while signals are watched, and naming the process.
enum BusProcess {
    /// Runs `body` as a service (a ``BlockingService`` under a ``ServiceRunner``), logging on
    /// the command's logger and flushing its outputs before a forced exit.
    ///
    /// - Parameters:
    ///   - thread: The loop's thread's name (`top -H`, `perf`): the command's.
    ///   - beforeForcedExit: Called before a second SIGINT ends the process, to undo what must
    ///     not outlive it (`kinesia watch` shows the terminal's cursor again).
    static func run<Result: Sendable>(
        context: CommandContext, thread: String, beforeForcedExit: @escaping @Sendable () -> Void = {},
        _ body: @escaping @Sendable (StopToken) throws -> Result
    ) async throws -> Result {
        let runner = ServiceRunner(
            logger: context.logger,
            forcedEnd: .exitProcess(beforeExit: {
                beforeForcedExit()
                context.standardOutput.flush()
                context.standardError.flush()
            }))
        return try await runner.run(BlockingService(threadName: "kinesia.\(thread)", body))
    }

    /// The process name: `--name`, else `KINESIA_PROCESS_NAME` (set by `kinesia up`), else
    /// `fallback` (made by ``derivedName(_:_:)`` when it holds a name the user gave: only the
    /// names the user gave may be refused).
    /// - Throws: ``CLIError/usage(_:)`` when the name cannot be a topic name.
    static func processName(_ option: String?, environment: [String: String], fallback: String)
        throws(CLIError) -> String
    {
        let name = option ?? environment["KINESIA_PROCESS_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? fallback
        guard Topic.isValidName(name) else {
            throw CLIError.usage(Topic.invalidNameMessage(name, role: "process name"))
        }
        return name
    }

    /// A default process name made of `prefix` and a name the user gave
    /// (``BusProcessIdentity/derivedName(_:_:)``).
    static func derivedName(_ prefix: String, _ subject: String) -> String {
        BusProcessIdentity.derivedName(prefix, subject)
    }

    /// The bus of a command, made ready (its directory exists, private).
    /// - Throws: ``CLIError/usage(_:)`` for a malformed `--bus`, ``CLIError/failure(_:)`` when
    ///   the directory cannot be used.
    static func bus(_ option: String?, environment: [String: String]) throws(CLIError) -> BusAddress {
        let bus: BusAddress
        do {
            bus = try BusAddress.resolve(option, environment: environment)
        } catch {
            throw CLIError.usage(error.description)
        }
        do {
            try bus.prepare()
        } catch {
            throw CLIError.failure(error.description)
        }
        return bus
    }

    /// The `--bus` argument every bus command takes.
    static func busArgument<Command>(_ keyPath: WritableKeyPath<Command, String?>) -> Argument<Command> {
        .option(
            "bus", keyPath, valueName: "dir|tcp://host:port",
            help: "The bus: a directory for IPC sockets, or tcp://HOST:PORT (default: $KINESIA_BUS, "
                + "else $XDG_RUNTIME_DIR/kinesia, else /tmp/kinesia-<uid>).")
    }

    /// The `--name` argument.
    static func nameArgument<Command>(_ keyPath: WritableKeyPath<Command, String?>, example: String)
        -> Argument<Command>
    {
        .option(
            "name", keyPath, valueName: "name",
            help: "The process name on health/<name>/ (default: $KINESIA_PROCESS_NAME, else \(example)).")
    }
}
