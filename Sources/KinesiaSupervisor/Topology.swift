public import Foundation
import KinesiaJSON
import KinesiaMotion
public import KinesiaSystem

/// A whole deployment: the processes `kinesia up` starts and supervises, in one JSON file.
///
/// A topology names every process once, says how each one is restarted when it dies and how
/// long the graceful shutdown may take. Commands are `kinesia` subcommand argument lists: the
/// supervisor runs them with its own executable and gives every one the topology's bus.
///
/// ```json
/// {
///   "bus": "/run/kinesia",
///   "processes": [
///     {"name": "broker", "command": ["broker"]},
///     {"name": "left", "command": ["worker", "--camera", "cam0",
///                                  "--session", "left=shoulderAbduction:left"]},
///     {"name": "ingest", "command": ["ingest", "--camera", "cam0",
///                                    "--source", "sim:shoulderAbduction"],
///      "restart": "on-failure"}
///   ],
///   "shutdown": {"deadlineSeconds": 5},
///   "restart": {"initialDelaySeconds": 0.2, "maxDelaySeconds": 5,
///               "maxRestarts": 5, "windowSeconds": 60}
/// }
/// ```
///
/// Every key but `processes` and each process's `name` and `command` is optional. Unknown keys
/// are errors (a misspelt `"restrat"` would otherwise be silently ignored), and so are
/// duplicate keys: the file is read by the project's one strict JSON reader. Load a file with
/// ``load(contentsOf:)``, which decodes and validates it and throws a ``TopologyError`` naming
/// the file, the line and column, and the bad field.
public struct Topology: Hashable, Sendable {
    /// Where the bus lives: an IPC directory or `tcp://HOST:PORT`; `nil` leaves each command
    /// its own default (a per-user runtime directory).
    ///
    /// A relative directory is resolved against the directory of the topology file.
    public var bus: String?
    /// The processes, in the order of the file.
    public var processes: [ProcessSpec]
    /// How the supervisor stops everything on SIGINT/SIGTERM.
    public var shutdown: ShutdownPolicy
    /// How dead children are restarted.
    public var restart: RestartLimits
    /// How processes are started one after the other.
    public var startup: StartupPolicy

    /// Creates a topology; call ``validate()`` (or use ``load(contentsOf:)``) before running it.
    public init(
        bus: String? = nil, processes: [ProcessSpec], shutdown: ShutdownPolicy = .init(),
        restart: RestartLimits = .init(), startup: StartupPolicy = .init()
    ) {
        self.bus = bus
        self.processes = processes
        self.shutdown = shutdown
        self.restart = restart
        self.startup = startup
    }
}

/// One supervised process of a ``Topology``.
public struct ProcessSpec: Hashable, Sendable {
    /// The unique name used in every line the supervisor prints (letters, digits, `.`, `_`, `-`).
    public var name: String
    /// The `kinesia` arguments, e.g. `["worker", "--camera", "cam0"]`; with an
    /// ``executable`` override, the arguments given to that executable.
    public var command: [String]
    /// Another executable to run instead of `kinesia` (found on `PATH` when it has no `/`).
    ///
    /// Meant for tests and for wrapping other tools; the supervisor then appends no `--bus`
    /// (the bus is still in the `KINESIA_BUS` environment variable).
    public var executable: String?
    /// When the process is restarted after it exits.
    public var restart: RestartPolicy
    /// What the process does, which decides the start and the drain order.
    public var role: ProcessRole
    /// Names of processes that must be running before this one starts.
    public var after: [String]
    /// Extra environment variables for this process.
    public var environment: [String: String]

    /// Creates a process description.
    ///
    /// - Parameters:
    ///   - name: The unique name.
    ///   - command: The `kinesia` arguments (or the override's arguments).
    ///   - executable: An executable to run instead of `kinesia`.
    ///   - restart: The restart policy; `.onFailure` by default.
    ///   - role: The role; inferred from the subcommand when `nil`.
    ///   - after: Processes that must run before this one starts.
    ///   - environment: Extra environment variables.
    public init(
        name: String, command: [String], executable: String? = nil,
        restart: RestartPolicy = .onFailure, role: ProcessRole? = nil, after: [String] = [],
        environment: [String: String] = [:]
    ) {
        self.name = name
        self.command = command
        self.executable = executable
        self.restart = restart
        self.role = role ?? ProcessRole(inferredFrom: executable == nil ? command.first : nil)
        self.after = after
        self.environment = environment
    }
}

/// When a child that exited is started again.
public enum RestartPolicy: String, Hashable, Sendable, CaseIterable {
    /// After every exit, even a successful one.
    case always
    /// After a non-zero exit status or a death by signal (the default).
    case onFailure = "on-failure"
    /// Never: an exit is final.
    case never

    /// Whether a child that ended with `status` is started again.
    public func restarts(after status: TerminationStatus?) -> Bool {
        switch self {
        case .always: true
        case .onFailure: status != .exited(0)
        case .never: false
        }
    }
}

/// What a process does in the fan-out: decides the start order (brokers first, intake last)
/// and the drain order on shutdown (intake first, brokers last).
public enum ProcessRole: String, Hashable, Sendable, CaseIterable {
    /// The XSUB/XPUB proxy every other process talks through.
    case broker
    /// A source of poses (stopped first, so that no new work enters).
    case ingest
    /// A host of motion sessions.
    case worker
    /// A reader of events: `listen`, `watch`, voice, analytics.
    case consumer

    /// The role of a `kinesia` subcommand: `broker`, `ingest` and `worker` are themselves,
    /// anything else (and an executable override) is a consumer.
    init(inferredFrom subcommand: String?) {
        switch subcommand {
        case "broker": self = .broker
        case "ingest": self = .ingest
        case "worker": self = .worker
        default: self = .consumer
        }
    }

    /// The order of shutdown stages: intake first, then the workers drain, then the consumers
    /// read the last events, and the broker goes last.
    public static let drainOrder: [ProcessRole] = [.ingest, .worker, .consumer, .broker]
}

/// How long the graceful shutdown may take.
public struct ShutdownPolicy: Hashable, Sendable {
    /// How long each drain stage waits after SIGTERM before it sends SIGKILL.
    public var deadline: Duration

    /// Creates a shutdown policy.
    public init(deadline: Duration = .seconds(5)) {
        self.deadline = deadline
    }
}

/// The back-off and the limit of restarts, shared by every process of a topology.
public struct RestartLimits: Hashable, Sendable {
    /// The delay before the first restart; it doubles with every restart within ``window``.
    public var initialDelay: Duration
    /// The longest delay between an exit and the restart.
    public var maxDelay: Duration
    /// How many restarts of one process ``window`` may hold before the supervisor gives up on it.
    public var maxRestarts: Int
    /// The sliding window over which restarts are counted.
    public var window: Duration

    /// Creates restart limits.
    public init(
        initialDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(5),
        maxRestarts: Int = 5, window: Duration = .seconds(60)
    ) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxRestarts = maxRestarts
        self.window = window
    }
}

/// How processes are started one after the other.
public struct StartupPolicy: Hashable, Sendable {
    /// How long a process must have been running before the processes that come after it
    /// start (so that a broker has bound its sockets before workers connect).
    public var settle: Duration

    /// Creates a startup policy.
    public init(settle: Duration = .milliseconds(200)) {
        self.settle = settle
    }
}

extension Topology {
    /// Reads, decodes and validates a topology file.
    ///
    /// A relative ``bus`` directory is made absolute against the file's directory.
    ///
    /// - Parameter url: The JSON file.
    /// - Returns: A valid topology.
    /// - Throws: ``TopologyError`` naming the file and the bad field.
    public static func load(contentsOf url: URL) throws(TopologyError) -> Topology {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TopologyError(
                file: url.path, field: nil, message: "cannot read the file (\(Self.reason(error)))")
        }
        var topology = try decode(data, file: url.path)
        if let bus = topology.bus, !bus.contains("://"), !bus.hasPrefix("/") {
            topology.bus = url.deletingLastPathComponent().appendingPathComponent(bus).standardized.path
        }
        return topology
    }

    /// Decodes and validates a topology from JSON bytes.
    ///
    /// - Parameters:
    ///   - data: The JSON text.
    ///   - file: The name used in error messages.
    /// - Returns: A valid topology (a relative bus directory is left as it is).
    /// - Throws: ``TopologyError`` naming `file`, the line and column, and the bad field.
    public static func decode(_ data: Data, file: String) throws(TopologyError) -> Topology {
        let bytes = Array(data)
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: bytes)
        } catch {
            throw TopologyError(file: file, syntaxError: error)
        }
        let topology: Topology
        do {
            topology = try Topology(json: value)
        } catch {
            throw TopologyError(file: file, path: error.path, message: error.message, in: bytes)
        }
        do {
            try topology.validate()
        } catch {
            var located = TopologyError(
                file: file, path: TopologyError.path(ofField: error.field), message: error.message, in: bytes)
            located.field = error.field
            throw located
        }
        return topology
    }

    /// The C library's words for a read error (`No such file or directory`), when there is an
    /// errno behind it.
    private static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? POSIXError {
            return Errno(rawValue: underlying.code.rawValue).description
        }
        return error.localizedDescription
    }
}
