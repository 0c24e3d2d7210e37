import Foundation
import KinesiaAnalytics
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaStore
import KinesiaWire

/// `kinesia record --db FILE [--camera ID...]`: stores the bus's events, analytics records and
/// periodic snapshots in SQLite, each once.
///
/// It subscribes `event/<camera>/` and `snapshot/<camera>/` for each `--camera` (every camera
/// without one), decodes each message as ``BusMessage/messages(from:)`` does, and stores it in a
/// ``RecordStore`` keyed by its sender's stream id, topic and sequence number, so that a message
/// delivered twice is stored once. Snapshots are kept at most every `--snapshot-interval`
/// seconds of pose time per session (and at every change of the rep counts), enough for the
/// report's angle chart. Inserts are committed in batches (every 256 messages or 200 ms).
/// Malformed messages and gaps are counted, logged and reported on `health/<name>/`; nothing is
/// fatal but a database that cannot be written.
public struct RecordCommand: ParsableCommand {
    /// `record`, with its help.
    public static let configuration = CommandConfiguration(
        name: "record", summary: "Store events, analytics and periodic snapshots in an SQLite database.",
        discussion: """
            Subscribes event/<camera>/ and snapshot/<camera>/ for each --camera (every camera \
            without one) and stores each message once, keyed by its sender's stream id, topic and \
            sequence number (a replay or a restart never doubles a rep). The database is in WAL \
            mode (kinesia report can read it while it records); its schema is migrated on open \
            (PRAGMA user_version) and described in docs/record-schema.md. Malformed messages and \
            gaps are counted on health/<name>/. Stops on SIGINT/SIGTERM after committing.
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

    /// The subscriptions: each camera's events and snapshots, or every camera's.
    func prefixes() throws(TopicError) -> [TopicPrefix] {
        guard !cameras.isEmpty else { return [.kind(.event), .kind(.snapshot)] }
        var result: [TopicPrefix] = []
        for camera in cameras {
            result.append(try .events(camera: camera))
            result.append(try .snapshots(camera: camera))
        }
        return result
    }

    /// Records until a signal.
    public func run(context: CommandContext) async throws {
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let name = try BusProcess.processName(
            name, environment: context.environment, fallback: BusProcess.derivedName("record", "\(getpid())"))
        let database = database ?? ""
        // Opened here first, so that a file that cannot be a database fails before the bus.
        do {
            try RecordStore(path: database).close()
        } catch {
            throw CLIError.failure("kinesia record: \(error)")
        }
        let command = self
        try await BusProcess.run(context: context) { stop in
            try command.record(database, bus: bus, name: name, stop: stop, context: context)
        }
    }

    private func record(
        _ database: String, bus: BusAddress, name: String, stop: StopToken, context: CommandContext
    ) throws {
        let log = context.logger
        let store = try RecordStore(path: database)
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let publisher = try BusPublisher(
            context: zmq, bus: bus, linger: .seconds(1), connectionTimeout: .seconds(2))
        defer { publisher.close() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus, prefixes: try prefixes())
        defer { subscriber.close() }
        var health = try HealthPublisher(process: name, role: "record", problems: { log.warning($0) })
        var recorder = Recorder(snapshotInterval: snapshotInterval)
        let clock = ContinuousClock()
        var lastCommit = clock.now
        var pending = 0

        func commit() throws {
            try store.commit()
            pending = 0
            lastCommit = clock.now
        }
        func handle(_ delivery: BusSubscriber.Delivery) throws {
            for message in BusMessage.messages(from: delivery) {
                switch recorder.decide(message) {
                case .store(let payload, let key):
                    try store.begin()
                    if try store.insert(payload, key: key) {
                        recorder.stored += 1
                    } else {
                        recorder.duplicates += 1
                    }
                    pending += 1
                case .skip(let key):
                    try store.begin()
                    try store.advanceCursor(key)
                    pending += 1
                case .warn(let text):
                    log.warning(text)
                case .none:
                    break
                }
            }
            if pending >= 256 || (pending > 0 && clock.now - lastCommit >= .milliseconds(200)) {
                try commit()
            }
        }

        log.info(
            "recording \(cameras.isEmpty ? "every camera" : cameras.joined(separator: ", ")) on \(bus) into \(database)"
        )
        while !stop.isRequested {
            health.publishIfDue(counters: { recorder.counters }, via: publisher)
            if pending > 0, clock.now - lastCommit >= .milliseconds(200) { try commit() }
            guard let delivery = try subscriber.receive(timeout: .milliseconds(100)) else { continue }
            try handle(delivery)
            var burst = 0
            while burst < 10_000, let next = try subscriber.tryReceive() {
                try handle(next)
                burst += 1
            }
        }
        let deadline = clock.now.advanced(by: .milliseconds(500))
        while clock.now < deadline, let next = try subscriber.tryReceive() { try handle(next) }
        try commit()
        try store.close()
        health.publish(counters: recorder.counters, via: publisher)
        log.info(
            "stopped: \(recorder.stored) stored, \(recorder.duplicates) already stored, "
                + "\(recorder.snapshotsSkipped) snapshots skipped, \(recorder.malformed) malformed, \(recorder.missing) missing"
        )
    }
}

/// What `kinesia record` does with each message, with no I/O: store it, skip it (a snapshot
/// between two kept ones: its cursor still moves), or warn; and the counters.
struct Recorder {
    /// What to do with a message.
    enum Decision {
        /// Store the payload under the key.
        case store(RecordStore.Payload, RecordStore.Key)
        /// Do not store it, but move the stream's cursor.
        case skip(RecordStore.Key)
        /// Tell the operator.
        case warn(String)
    }

    let snapshotInterval: Double
    /// Per session (`camera/session`): the pose time and counts of the last snapshot kept.
    private var lastKept: [String: (t: Double, counts: (Int, Int))] = [:]
    var stored = 0
    var duplicates = 0
    var snapshotsSkipped = 0
    var malformed = 0
    var missing: UInt64 = 0
    var restarts = 0

    init(snapshotInterval: Double) {
        self.snapshotInterval = snapshotInterval
    }

    var counters: [String: Int] {
        [
            "stored": stored, "duplicates": duplicates, "snapshotsSkipped": snapshotsSkipped,
            "malformed": malformed, "gaps": Int(clamping: missing), "restarts": restarts,
        ]
    }

    static func key(_ message: some BusTopicMessage) -> RecordStore.Key {
        RecordStore.Key(
            streamID: message.streamID.rawValue, topic: message.topic.string, sequence: message.sequence,
            camera: message.camera, session: message.session)
    }

    mutating func decide(_ message: BusMessage) -> Decision? {
        switch message {
        case .event(let e):
            return .store(.event(t: e.t, e.event), Self.key(e))
        case .analytics(let a):
            return .store(.analytics(t: a.t, a.record), Self.key(a))
        case .snapshot(let s):
            let id = s.camera + "/" + s.session
            let counts = (s.snapshot.repCount, s.snapshot.rejectedCount)
            if let last = lastKept[id], last.counts == counts, s.t >= last.t, s.t - last.t < snapshotInterval
            {
                snapshotsSkipped += 1
                return .skip(Self.key(s))
            }
            lastKept[id] = (s.t, counts)
            return .store(.snapshot(t: s.t, s.snapshot), Self.key(s))
        case .malformed(let bad):
            malformed += 1
            return malformed <= 10 || malformed % 1000 == 0
                ? .warn("malformed message: \(bad) (\(malformed) so far)") : nil
        case .gap(let gap):
            switch gap {
            case .missed(_, let count, _): missing += count
            case .senderRestarted: restarts += 1
            case .overflow(let dropped): missing += UInt64(dropped)
            }
            return .warn("\(gap)")
        case .health, .pose:
            return nil
        }
    }
}
