import Foundation
import KinesiaClient
import KinesiaControl
import KinesiaJSON
import KinesiaMotion
import KinesiaService
import KinesiaSystem
import KinesiaWire

/// `kinesia session start|stop|reset|baseline|list`: commands the site's sessions through the
/// coordinator (``ControlClient``), and prints its answer.
///
/// ```text
/// $ kinesia session start cam0/left --exercise squat --side left --patient p-17
/// cam0/left started on worker w1 (run 3)
/// $ kinesia session list
/// SESSION    EXERCISE  SIDE  PATIENT  POOL     WORKER  RUN  STATE
/// cam0/left  squat     left  p-17     default  w1      3    running
/// ```
///
/// Exit status: 0 when done, 64 for a command that is not valid, 1 otherwise (already running,
/// not running, no live worker, not confirmed in time, no coordinator).
public struct SessionCommand: ParsableCommand {
    /// What to do.
    public enum Action: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Start a session on a pool worker.
        case start
        /// Stop a session: its run ends.
        case stop
        /// End a session's run and start a new one.
        case reset
        /// End a session's run and start a new one that begins with a baseline measurement.
        case baseline
        /// The site's sessions.
        case list
    }

    /// The output of `list` and of the answers.
    public enum Format: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// Readable lines.
        case text
        /// The coordinator's answer as one JSON object.
        case json
    }

    /// `session`, with its help.
    public static let configuration = CommandConfiguration(
        name: "session",
        summary: "Start, stop, reset, baseline and list the site's sessions (through kinesia coordinator).",
        discussion: """
            session start CAMERA/NAME --exercise ID|@FILE --side left|right|analytics [--patient REF] \
            [--pool NAME] [--worker NAME] starts a session on a live worker of the pool (default: \
            default), a new run with its own stream of events. session stop ends its run, session \
            reset ends it and starts a new one, session baseline CAMERA/NAME [--reps N] does too, the \
            new run beginning with a baseline measurement of N clean reps (default: the exercise's), \
            session list shows every session with its worker, run and state. Each command answers once its worker confirms, or says it was decided but \
            not confirmed. --request-id makes a retried command safe: the same id is answered \
            with the same answer and does nothing again. Exit status 0 done, 64 invalid, 1 \
            otherwise.
            """)

    /// The options.
    public static var arguments: [Argument<SessionCommand>] {
        [
            .positional("action", \.action, help: "start, stop, reset, baseline or list."),
            .positional("session", \.session, help: "CAMERA/NAME (start, stop, reset, baseline)."),
            .option(
                "exercise", \.exercise, valueName: "id|@file",
                help: "The exercise (start): a catalog id or @FILE."),
            .option("side", \.side, valueName: "side", help: "left, right or analytics (start)."),
            .option("patient", \.patient, valueName: "ref", help: "The patient's reference (start)."),
            .option(
                "pool", \.pool, valueName: "name", help: "The pool of workers (start; default: default)."),
            .option("worker", \.worker, valueName: "name", help: "The one worker to host it (start)."),
            .option(
                "reps", \.reps, valueName: "n",
                help: "Clean reps the baseline measures (baseline; default: the exercise's)."),
            .option(
                "request-id", \.requestID, valueName: "id",
                help: "The request's id (default: a new random one); the same id is done once."),
            .option("timeout", \.timeout, valueName: "seconds", help: "How long to wait for the answer."),
            .option("format", \.format, valueName: "format", help: "Output format."),
            BusProcess.busArgument(\.bus),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// `start`, `stop`, `reset`, `baseline` or `list`.
    public var action = Action.list
    /// `CAMERA/NAME`.
    public var session: String?
    /// `--exercise`.
    public var exercise: String?
    /// `--side`.
    public var side: String?
    /// `--patient`.
    public var patient: String?
    /// `--pool`.
    public var pool = SessionPlan.defaultPool
    /// `--worker`.
    public var worker: String?
    /// `--reps`.
    public var reps: Int?
    /// `--request-id`.
    public var requestID: String?
    /// `--timeout`.
    public var timeout = 5.0
    /// `--format`.
    public var format = Format.text
    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure` (a TCP bus: a key of the control role).
    var security = BusSecurityOptions()

    /// A command with every default.
    public init() {}

    /// Checks the options against the action.
    public func validate() throws(CLIError) {
        _ = try request()
        guard timeout > 0, timeout <= 600 else { throw CLIError.usage("--timeout takes 0 to 600 seconds") }
    }

    /// The request the options make.
    ///
    /// - Throws: ``CLIError/usage(_:)`` for options that do not make one; ``CLIError/failure(_:)``
    ///   for an exercise file that cannot be read.
    func request() throws(CLIError) -> ControlRequest {
        let startOnly = [
            ("--exercise", exercise), ("--side", side), ("--patient", patient), ("--worker", worker),
        ]
        if action != .start, let given = startOnly.first(where: { $0.1 != nil }) {
            throw CLIError.usage("\(given.0) is for session start")
        }
        if action != .baseline, reps != nil { throw CLIError.usage("--reps is for session baseline") }
        let command: ControlRequest.Command
        do {
            switch action {
            case .list:
                guard session == nil else { throw CLIError.usage("session list takes no CAMERA/NAME") }
                command = .list
            case .stop, .reset:
                guard let session else {
                    throw CLIError.usage("session \(action.rawValue) needs CAMERA/NAME")
                }
                let key = try SessionKey(parsing: session)
                command = action == .stop ? .stop(key) : .reset(key)
            case .baseline:
                guard let session else { throw CLIError.usage("session baseline needs CAMERA/NAME") }
                if let reps { try SessionPlan.checkBaseline(reps: reps) }
                command = .baseline(try SessionKey(parsing: session), reps: reps)
            case .start:
                guard let session else { throw CLIError.usage("session start needs CAMERA/NAME") }
                guard let exercise else { throw CLIError.usage("session start needs --exercise ID or @FILE") }
                guard let side else {
                    throw CLIError.usage("session start needs --side left, right or analytics")
                }
                let file: String
                if exercise.hasPrefix("@") {
                    let path = String(exercise.dropFirst())
                    _ = try ExerciseFile.loadForCommand(path)
                    guard let data = FileManager.default.contents(atPath: path) else {
                        throw CLIError.failure("\(path): cannot read the exercise file")
                    }
                    file = String(decoding: data, as: UTF8.self)
                } else {
                    file = try SessionPlan.catalogExercise(exercise)
                }
                command = .start(
                    try SessionPlan(
                        key: SessionKey(parsing: session), exerciseFile: file,
                        analysis: SessionPlan.Analysis(parsing: side), patient: patient, pool: pool,
                        worker: worker))
            }
            return try ControlRequest(id: requestID ?? ControlClient.newRequestID(), command: command)
        } catch let error as ControlError {
            throw CLIError.usage(error.description)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("\(error)")
        }
    }

    /// Sends the command, prints the answer, and exits with its status.
    ///
    /// The wait for the answer (up to `--timeout`, a blocking receive) is on a thread of its own
    /// (``DedicatedThread``), not on a thread of the cooperative pool: a caller in the same
    /// process (a test, an application) keeps the pool's few threads for its other tasks.
    public func run(context: CommandContext) async throws {
        let request = try request()
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .control, context: context)
        let client = ControlClient(bus: bus, timeout: .seconds(double: timeout))
        let answer: ControlAnswer
        do {
            answer = try await DedicatedThread.run(named: "kinesia.session") {
                () throws(ControlClientError) in
                try client.send(request)
            }
        } catch {
            throw CLIError.failure(error.description)
        }
        switch format {
        case .json:
            context.standardOutput.write(
                String(decoding: ControlMessage.answer(answer).encoded(), as: UTF8.self) + "\n")
        case .text where answer.outcome == .listed:
            context.standardOutput.write(Self.table(answer.sessions))
        case .text:
            let line = answer.message + "\n"
            if answer.outcome.exitCode == 0 {
                context.standardOutput.write(line)
            } else {
                context.standardError.write("kinesia session: " + line)
            }
        }
        if answer.outcome.exitCode != 0 { throw ExitStatus(answer.outcome.exitCode) }
    }

    /// The sessions as an aligned table.
    static func table(_ sessions: [SessionStatus]) -> String {
        let header = [
            "SESSION", "EXERCISE", "SIDE", "PATIENT", "POOL", "WORKER", "RUN", "STATE", "REPS", "REJECTED",
        ]
        let rows = sessions.map { status in
            [
                status.plan.key.description, status.plan.exercise.id, status.plan.analysis.rawValue,
                status.plan.patient ?? "-", status.plan.pool, status.worker ?? "-", String(status.plan.run),
                status.state.rawValue, status.repCount.map(String.init) ?? "-",
                status.rejectedCount.map(String.init) ?? "-",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, text in
                column == row.count - 1
                    ? text : text.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n") + "\n"
    }
}
