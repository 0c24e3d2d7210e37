import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaJournal
import KinesiaMotion
public import KinesiaPublishJournal
import KinesiaService
import KinesiaSystem
import KinesiaWire
public import KinesiaWorker

/// `kinesia worker --camera ID --session NAME=EXERCISE:SIDE ...`: hosts motion sessions on the
/// poses of the bus and publishes what they find.
///
/// The command is the socket loop only. It subscribes `pose/<camera>/` for each camera of its
/// sessions, hands every delivery to a ``WorkerCore`` (which hosts the sessions and makes every
/// decision: fan-out, events, snapshots, sender restarts, counters), performs the actions the
/// core returns (publish each event on `event/<camera>/<session>/` as the JSON line
/// `kinesia analyze --format json` prints, and the snapshot on `snapshot/<camera>/<session>/`;
/// log notices), and tells the core how each publish went. Its health report, about once a
/// second on `health/<name>/`, is ``WorkerCore/healthCounters(sequence:)``: poses, decode errors
/// (by reason), gaps, sender restarts, duplicates, rejected poses, events, snapshots and failed
/// publishes (by reason). On a graceful stop, analytics sessions publish their final set summaries.
public struct WorkerCommand: ParsableCommand {
    /// `worker`, with its help.
    public static let configuration = CommandConfiguration(
        name: "worker", summary: "Host motion sessions on a camera's poses; publish events and snapshots.",
        discussion: """
            Each --session [CAMERA/]NAME=EXERCISE:SIDE (CAMERA defaults to --camera) analyses \
            pose/<camera>/ and publishes every event on event/<camera>/<name>/ (the JSON of \
            'kinesia analyze --format json') and its snapshot on snapshot/<camera>/<name>/ \
            (at most --snapshot-rate per second of pose time, and at every change of the rep \
            counts). SIDE 'analytics' analyses both sides and publishes, on event/<camera>/<name>/, \
            each rep's tempo and range (repTempo), each left-right pair's symmetry (repSymmetry) \
            and each side's set figures (setSummary: trend of the peaks, rejected share by fault, \
            progress against the baseline), and no snapshot. A sender restart keeps the sessions and their counts; when the new stream's \
            time starts over, those sessions start their time over (timeBaseRestarts), a rep under \
            way is dropped. Counters on health/<name>/ every second, failed \
            publishes included. Stops on SIGINT/SIGTERM after the poses already received.
            """)

    /// The options.
    public static var arguments: [Argument<WorkerCommand>] {
        [
            .option("camera", \.camera, valueName: "id", help: "The camera of sessions that name none."),
            .option(
                "session", \.sessions, valueName: "[camera/]name=exercise:side",
                help: "A session to host (side: left, right, or analytics for both sides' analytics)."),
            .option(
                "pool", \.pool, valueName: "name",
                help: "Take sessions from the coordinator (kinesia session start) as a worker of this pool, "
                    + "instead of --session."),
            .option(
                "capacity", \.capacity, valueName: "n",
                help: "With --pool: the most sessions this worker hosts (default 16)."),
            BusProcess.busArgument(\.bus),
            BusProcess.nameArgument(\.name, example: "worker-<pid>"),
            .option(
                "snapshot-rate", \.snapshotRate, valueName: "hz",
                help: "Snapshots per second of pose time, at most (count changes always send one)."),
            .option(
                "hole-wait", \.holeWaitMilliseconds, valueName: "ms",
                help: "With a journal: how long a hole in a camera's live poses is waited for before it is "
                    + "given up (default 500; none when nobody serves the stream)."),
        ]
            + JournalOptions.arguments(
                \.journal,
                resumes: "Start new event streams for the sessions (a new patient or a reset), even when "
                    + "the state directory has the same sessions' streams to resume.")
            + BusSecurityOptions.clientArguments(\.security)
    }

    /// `--camera`.
    public var camera: String?
    /// `--session` values.
    public var sessions: [String] = []
    /// `--pool`.
    public var pool: String?
    /// `--capacity`.
    public var capacity = 16
    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()
    /// `--name`.
    public var name: String?
    /// `--snapshot-rate`.
    public var snapshotRate = 15.0
    /// `--hole-wait`, in milliseconds.
    public var holeWaitMilliseconds = 500
    /// `--state`, `--no-journal`, `--fsync`, `--journal-max-bytes`, `--journal-max-age`,
    /// `--new-session`.
    public var journal = JournalOptions(
        fsync: JournalOptions.workerSync, segmentBytes: JournalOptions.workerSegmentBytes)

    /// A command with every default.
    public init() {}

    /// The sessions, parsed and checked.
    /// - Throws: ``CLIError/usage(_:)`` for a malformed or duplicate session, an unknown
    ///   exercise or side.
    public func parsedSessions() throws(CLIError) -> [WorkerSession] {
        if let camera, !Topic.isValidName(camera) {
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        var result: [WorkerSession] = []
        var seen: Set<String> = []
        for text in sessions {
            let session = try WorkerSession(parsing: text, defaultCamera: camera)
            guard seen.insert(session.camera + "/" + session.name).inserted else {
                throw CLIError.usage("session \(session.camera)/\(session.name) is given twice")
            }
            result.append(session)
        }
        guard !result.isEmpty || pool != nil else {
            throw CLIError.usage(
                "give at least one --session, or --pool NAME to take sessions from the coordinator")
        }
        return result
    }

    /// Checks the sessions and the rate.
    public func validate() throws(CLIError) {
        let sessions = try parsedSessions()
        if let pool {
            guard Topic.isValidName(pool) else {
                throw CLIError.usage(Topic.invalidNameMessage(pool, role: "pool"))
            }
            guard sessions.isEmpty else {
                throw CLIError.usage(
                    "a pool worker takes its sessions from the coordinator: give them with kinesia session start, "
                        + "not --session")
            }
            guard (1...1024).contains(capacity) else { throw CLIError.usage("--capacity takes 1 to 1024") }
        }
        guard snapshotRate > 0 else { throw CLIError.usage("--snapshot-rate must be positive") }
        guard (0...600_000).contains(holeWaitMilliseconds) else {
            throw CLIError.usage("--hole-wait takes 0 to 600000 milliseconds")
        }
    }

    /// Runs the sessions until a signal.
    public func run(context: CommandContext) async throws {
        let sessions = try parsedSessions()
        let (bus, insecure) = try BusProcess.bus(bus, security: security, role: .worker, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment,
            fallback: BusProcess.derivedName("worker", "\(ProcessIdentity.id)"))
        let rate = snapshotRate
        let journalOptions = journal
        let holeWait = Duration.milliseconds(holeWaitMilliseconds)
        if let pool {
            // Checked now, not at each session's start: a pool worker whose every session would
            // fail is a usage error.
            if !journalOptions.disabled {
                _ = try CLIError.from { () throws(PublishJournalError) in
                    try journalOptions.stateDirectory(environment: context.environment, bus: bus.description)
                }
            }
            let service = PoolWorkerService(
                .init(
                    process: BusProcessIdentity(bus: bus, name: name, insecure: insecure), pool: pool,
                    capacity: capacity, snapshotRate: rate, journal: journalOptions, holeWait: holeWait,
                    environment: context.environment),
                log: context.logger)
            try await BusProcess.run(context: context, thread: "pool-worker") { stop in
                try service.run(until: stop)
            }
            return
        }
        let service = WorkerService(
            WorkerService.Configuration(
                process: BusProcessIdentity(bus: bus, name: name, insecure: insecure), sessions: sessions,
                snapshotRate: rate,
                journal: journalOptions, holeWait: holeWait, environment: context.environment),
            log: context.logger)
        try await BusProcess.run(context: context, thread: "worker") { stop in try service.run(until: stop) }
    }
}
