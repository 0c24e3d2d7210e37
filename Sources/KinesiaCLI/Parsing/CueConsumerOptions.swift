import Foundation
import KinesiaCueConsumers
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// The options every cue consumer takes: what it follows (`--camera`, `--session`), the bus,
/// its name on `health/`, and the bus's security.
struct CueConsumerOptions: Hashable, Sendable {
    /// `--camera`.
    var camera = ""
    /// `--session`, repeated.
    var sessions: [String] = []
    /// `--bus`.
    var bus: String?
    /// `--name`.
    var name: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()

    /// What is followed.
    var target: CueTarget { CueTarget(camera: camera, sessions: sessions) }

    /// `--camera` and `--session`.
    /// - Parameter done: What the consumer does with the events (`spoken`, `played`).
    static func targetArguments<Command>(
        _ keyPath: WritableKeyPath<Command, CueConsumerOptions>, done: String
    )
        -> [Argument<Command>]
    {
        [
            .option(
                "camera", keyPath.appending(path: \.camera), valueName: "id",
                help: "The camera whose events are \(done)."),
            .option(
                "session", keyPath.appending(path: \.sessions), valueName: "name",
                help: "Only this session's events; repeat for several (default: every session of the camera)."
            ),
        ]
    }

    /// `--bus`, `--name` and the security options.
    /// - Parameter role: The default name's prefix (`voice`: `voice-<pid>`).
    static func busArguments<Command>(_ keyPath: WritableKeyPath<Command, CueConsumerOptions>, role: String)
        -> [Argument<Command>]
    {
        [
            BusProcess.busArgument(keyPath.appending(path: \.bus)),
            BusProcess.nameArgument(keyPath.appending(path: \.name), example: "\(role)-<pid>"),
        ] + BusSecurityOptions.clientArguments(keyPath.appending(path: \.security))
    }

    /// The consumer of these options: the bus resolved (with its keys), the name given or
    /// `$KINESIA_PROCESS_NAME` or `ROLE-<pid>`.
    /// - Throws: ``CLIError`` for a bad bus, name or key.
    func consumer(role: String, context: CommandContext) throws(CLIError) -> CueConsumer {
        let (bus, insecure) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment,
            fallback: BusProcess.derivedName(role, "\(ProcessIdentity.id)"))
        return CueConsumer(target: target, role: role, name: name, bus: bus, insecure: insecure)
    }
}

extension CueConsumer {
    /// Reads a data file a therapist may edit (`--texts`, `--mapping`), or the built-in one.
    /// - Parameters:
    ///   - path: The file given, or `nil` for the built-in one.
    ///   - what: What it is, for the message when it cannot be read (`texts`, `mapping`).
    ///   - builtIn: The built-in value.
    ///   - parse: Parses the file's bytes; `source` names the file in its errors.
    /// - Throws: ``CLIError/failure(_:)`` naming the file and what is wrong in it.
    static func loadDataFile<Value>(
        _ path: String?, what: String, builtIn: () throws -> Value,
        parse: (_ bytes: [UInt8], _ source: String) throws -> Value
    ) throws(CLIError) -> Value {
        do {
            guard let path else { return try builtIn() }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError.failure("cannot read the \(what) file \(path)")
            }
            return try parse(Array(data), path)
        } catch let error as CLIError {
            throw error
        } catch {
            // The files' errors (VoiceTextsError, HapticMappingError) describe themselves.
            throw CLIError.failure("\(error)")
        }
    }
}

extension CueConsumer {
    /// Runs the consumer as the command's service: its logger, and its outputs flushed before a
    /// forced exit.
    func run(
        context: CommandContext, makeHandler: @escaping @Sendable (Logger) throws -> any CueHandler
    ) async throws {
        try await run(
            logger: context.logger,
            beforeForcedExit: {
                context.standardOutput.flush()
                context.standardError.flush()
            }, makeHandler: makeHandler)
    }
}
