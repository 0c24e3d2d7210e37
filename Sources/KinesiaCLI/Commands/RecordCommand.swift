import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaRecorder
import KinesiaService
import KinesiaStore
import KinesiaSystem
import KinesiaWire

/// `kinesia record --db FILE [--camera ID...] [--from beginning|now]`: stores the bus's events,
/// analytics records and periodic snapshots in SQLite, each exactly once, across its own crashes
/// and those of the publishers.
///
/// It follows `event/<camera>/` and `snapshot/<camera>/` for each `--camera` (every camera
/// without one) through an ``ExactlyOnceSubscriber``: every message of every stream, in order,
/// once, what was missed live fetched from its publisher's replay endpoint. Its durable cursor is
/// the database (``RecordWriter``): the rows and each stream's last sequence number are committed
/// together (every 256 messages or 200 ms), and a restarted recorder resumes every stream it
/// knows after what it stored. Streams it does not know start at their beginning (`--from
/// beginning`, the default) or with the first message received (`--from now`). Snapshots are kept
/// at most every `--snapshot-interval` seconds of pose time per stream (and at every change of
/// the rep counts), the same ones across restarts. Messages that cannot be had any more, and
/// malformed ones, are counted, logged and reported on `health/<name>/`; nothing is fatal but a
/// database that cannot be written.
public struct RecordCommand: ParsableCommand {
    /// Where streams the database does not know yet start.
    public enum From: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// At their first message still held by their publisher.
        case beginning
        /// At the first message received.
        case now

        /// As a ``ReplayStart``.
        var replayStart: ReplayStart { self == .beginning ? .beginning : .now }
    }

    /// `record`, with its help.
    public static let configuration = CommandConfiguration(
        name: "record", summary: "Store events, analytics and periodic snapshots in an SQLite database.",
        discussion: """
            Follows event/<camera>/ and snapshot/<camera>/ for each --camera (every camera \
            without one) exactly once: every message of every stream, in order, once, what was \
            missed live (a late start, a restart of the recorder or of a worker) fetched from the \
            worker's replay endpoint. Rows are keyed by their sender's stream id, topic and \
            sequence number, and each stream's last sequence number (the cursor, table streams) is \
            committed with the rows: after a crash, record started again on the same --db resumes \
            every stream after what it stored; --from says where streams it does not know start. \
            The database is in WAL mode (kinesia report can read it while it records); its schema \
            is migrated on open (PRAGMA user_version) and described in docs/record-schema.md. \
            Messages that cannot be had any more and malformed ones are counted on \
            health/<name>/. Stops on SIGINT/SIGTERM after committing.
            """)

    /// The options.
    public static var arguments: [Argument<RecordCommand>] {
        [
            .option(
                "db", \.database, valueName: "file", required: true,
                help: "The SQLite database (created if missing)."),
            .option(
                "camera", \.cameras, valueName: "id", help: "A camera to record (default: every camera)."),
            .option(
                "from", \.from, valueName: "beginning|now",
                help:
                    "Where streams the database does not know start: their first message still held, or now (a stored cursor always wins)."
            ),
            .option(
                "snapshot-interval", \.snapshotInterval, valueName: "seconds",
                help: "Keep a session's snapshot at most this often, in pose time (count changes always)."),
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "record-<pid>"),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--db`.
    public var database: String?
    /// `--camera` values.
    public var cameras: [String] = []
    /// `--from`.
    public var from = From.beginning
    /// `--snapshot-interval`.
    public var snapshotInterval = 0.2
    /// `--bus`.
    public var bus: String?
    /// `--name`.
    public var name: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()

    /// A command with every default.
    public init() {}

    /// Checks the cameras and the interval.
    public func validate() throws(CLIError) {
        guard let database, !database.isEmpty else { throw CLIError.usage("--db needs a file") }
        for camera in cameras where !Topic.isValidName(camera) {
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        guard snapshotInterval >= 0, snapshotInterval.isFinite else {
            throw CLIError.usage("--snapshot-interval must be 0 or more")
        }
    }

    /// Records until a signal.
    public func run(context: CommandContext) async throws {
        let (bus, insecure) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment,
            fallback: BusProcess.derivedName("record", "\(ProcessIdentity.id)"))
        let database = database ?? ""
        // Opened here first, so that a file that cannot be a database fails before the bus.
        do {
            try RecordStore(path: database).close()
        } catch {
            throw CLIError.failure("kinesia record: \(error)")
        }
        let service = RecordService(
            RecordService.Configuration(
                process: BusProcessIdentity(bus: bus, name: name, insecure: insecure), database: database,
                cameras: cameras,
                from: from.replayStart, snapshotInterval: snapshotInterval),
            log: context.logger)
        try await BusProcess.run(context: context, thread: "record") { stop in try service.run(until: stop) }
    }
}
