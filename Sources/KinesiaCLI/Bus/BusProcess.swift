import Foundation
import Glibc
import KinesiaClient
import KinesiaSystem
import KinesiaWire
import Synchronization

/// What the bus commands share: running their blocking socket loop on a thread of its own
/// while signals are watched, and naming the process.
enum BusProcess {
    /// Runs `body` on a dedicated thread (libzmq sockets block and are confined to one thread)
    /// while SIGINT and SIGTERM request a stop through the token. A second SIGINT (Control-C
    /// twice) ends the process at once with status 1; repeated SIGTERMs count as one (the
    /// kernel's parent-death signal may come several times, see ``ParentDeathSignal``).
    ///
    /// The signals are watched before `body` starts.
    ///
    /// - Parameter beforeForcedExit: Called before a second SIGINT ends the process, to undo
    ///   what must not outlive it (`kinesia watch` shows the terminal's cursor again).
    static func run<Result: Sendable>(
        context: CommandContext, beforeForcedExit: @escaping @Sendable () -> Void = {},
        _ body: @escaping @Sendable (StopToken) throws -> Result
    ) async throws -> Result {
        let signals = SignalStream([.interrupt, .terminate])
        let token = StopToken()
        let logger = context.logger
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals {
                    if token.isRequested {
                        guard signal == .interrupt else { continue }
                        logger.warning("\(signal) again: exiting at once")
                        beforeForcedExit()
                        context.standardOutput.flush()
                        context.standardError.flush()
                        exit(1)
                    }
                    logger.info("\(signal): stopping")
                    token.request(signal)
                }
            }
            defer { group.cancelAll() }
            return try await withCheckedThrowingContinuation { continuation in
                let thread = Thread {
                    continuation.resume(with: Swift.Result { try body(token) })
                }
                thread.name = "kinesia.bus"
                thread.start()
            }
        }
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

    /// A default process name made of `prefix` and a name the user gave (`ingest-<camera>`),
    /// always a valid topic name: when `prefix-subject` is longer than
    /// `Topic.maximumNameLength`, the subject is cut and followed by 8 hexadecimal digits of
    /// its FNV-1a hash, so that two long subjects still give two names, the same at every run.
    ///
    /// ```swift
    /// BusProcess.derivedName("ingest", "cam0")                             // "ingest-cam0"
    /// BusProcess.derivedName("ingest", String(repeating: "c", count: 64))  // "ingest-ccc…c-1a2b3c4d" (64 bytes)
    /// ```
    /// - Parameters:
    ///   - prefix: A short valid name (`ingest`, `worker`).
    ///   - subject: A valid name (a camera, a pid).
    static func derivedName(_ prefix: String, _ subject: String) -> String {
        let whole = "\(prefix)-\(subject)"
        guard whole.utf8.count > Topic.maximumNameLength else { return whole }
        var hash: UInt32 = 0x811C_9DC5
        for byte in subject.utf8 {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        let digits = String(hash, radix: 16)
        let suffix = "-" + String(repeating: "0", count: 8 - digits.count) + digits
        let room = Topic.maximumNameLength - prefix.utf8.count - 1 - suffix.utf8.count
        // Valid names are ASCII: cutting characters cuts bytes.
        return "\(prefix)-\(subject.prefix(room))\(suffix)"
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

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// A duration from seconds (negative and non-finite values give zero).
    static func seconds(double value: Double) -> Duration {
        guard value.isFinite, value > 0 else { return .zero }
        return .nanoseconds(Int64(min(value, 1e9) * 1e9))
    }
}
