import KinesiaBus
public import KinesiaClient
public import KinesiaService
import KinesiaStore
import KinesiaSystem
public import KinesiaWire

/// The record consumer (`kinesia record`): follows each camera's events and snapshots exactly
/// once (``ExactlyOnceSubscriber``) and stores the events, the analytics and a snapshot at most
/// every ``Configuration/snapshotInterval`` of pose time (and at every change of the rep
/// counts) in an SQLite database (``RecordWriter``), the same ones across restarts: a
/// restarted recorder resumes each stream after its last stored message.
///
/// ```swift
/// let service = RecordService(configuration, log: log)
/// try await ServiceRunner(logger: log).run(BlockingService { stop in try service.run(until: stop) })
/// ```
public struct RecordService: Sendable {
    /// What a recorder is given to run.
    public struct Configuration: Sendable {
        /// The bus, the process name and whether the bus is insecure.
        public var process: BusProcessIdentity
        /// The database file.
        public var database: String
        /// The cameras followed (empty: every camera).
        public var cameras: [String]
        /// Where streams the database does not know yet start.
        public var from: ReplayStart
        /// Seconds of pose time between two stored snapshots of a session, at least.
        public var snapshotInterval: Double

        /// A configuration.
        public init(
            process: BusProcessIdentity, database: String, cameras: [String] = [],
            from: ReplayStart = .beginning, snapshotInterval: Double = 0.2
        ) {
            self.process = process
            self.database = database
            self.cameras = cameras
            self.from = from
            self.snapshotInterval = snapshotInterval
        }
    }

    /// What it runs with.
    public let configuration: Configuration
    private let log: Logger
    /// The time of its decisions (snapshots kept per interval, the replay's timeouts, the last
    /// messages drained at a stop), counted from the start of ``run(until:)``.
    private let startClock: @Sendable () -> ElapsedClock

    /// A recorder that logs on `log` and times its decisions on `clock` (a ``ManualClock`` in
    /// tests).
    public init(_ configuration: Configuration, log: Logger, clock: some Clock<Duration> = ContinuousClock())
    {
        self.configuration = configuration
        self.log = log
        startClock = { ElapsedClock(clock) }
    }

    /// The subscriptions: each camera's events and snapshots, or every camera's.
    public static func prefixes(_ cameras: [String]) throws(TopicError) -> [TopicPrefix] {
        guard !cameras.isEmpty else { return [.kind(.event), .kind(.snapshot), .kind(.session)] }
        var result: [TopicPrefix] = []
        for camera in cameras {
            result.append(try .events(camera: camera))
            result.append(try .snapshots(camera: camera))
            result.append(try .runs(camera: camera))
        }
        return result
    }

    /// Records until `stop` is requested, then stores what already arrived (at most half a
    /// second), commits, and sends a last health report.
    ///
    /// - Throws: ``RecordServiceError/databaseUnopenable(_:_:)`` when the database cannot be
    ///   opened, ``RecordServiceError/databaseUnwritable(_:_:)`` when it cannot be written,
    ///   ``RecordServiceError/bus(_:_:)`` when the bus cannot be reached.
    public func run(until stop: StopToken) throws(RecordServiceError) {
        let database = configuration.database
        let bus = configuration.process.bus
        let cameras = configuration.cameras
        let log = self.log
        let elapsed = startClock()
        func now() -> Duration { elapsed.now }
        func onBus<Value: ~Copyable>(_ body: () throws(ZMQError) -> Value) throws(RecordServiceError) -> Value
        {
            try RecordServiceError.catching({ (error: ZMQError) in .bus(bus.description, error) }, body)
        }
        func writing<Value>(_ body: () throws(SQLiteError) -> Value) throws(RecordServiceError) -> Value {
            try RecordServiceError.catching(
                { (error: SQLiteError) in .databaseUnwritable(database, error) }, body)
        }
        let writer = try RecordServiceError.catching({ (error: SQLiteError) in
            .databaseUnopenable(database, error)
        }) { () throws(SQLiteError) in
            try RecordWriter(path: database, snapshotInterval: configuration.snapshotInterval, now: now())
        }
        let zmq = try onBus { () throws(ZMQError) in try ZMQContext() }
        defer { zmq.terminate() }
        let publisher = try onBus { () throws(ZMQError) in
            try BusPublisher(context: zmq, bus: bus, linger: .seconds(1), connectionTimeout: .seconds(2))
        }
        defer { publisher.close() }
        let topics = try RecordServiceError.catching(RecordServiceError.camera) { () throws(TopicError) in
            try Self.prefixes(cameras)
        }
        let subscriber = try onBus { () throws(ZMQError) in
            try ExactlyOnceSubscriber(
                context: zmq, bus: bus, topics: topics, from: configuration.from, cursor: writer.cursor)
        }
        defer { subscriber.close() }
        var health = try RecordServiceError.catching(RecordServiceError.processName) {
            () throws(TopicError) in
            try configuration.process.healthPublisher(role: "record", problems: { log.warning($0) })
        }
        func counters() -> [String: Int] {
            var values = writer.recorder.counters
            for (counter, value) in subscriber.machine.counters { values["replay.\(counter)"] = value }
            return values
        }
        func handle(_ delivery: ExactlyOnceSubscriber.Delivery) throws(RecordServiceError) {
            for warning in try writing({ () throws(SQLiteError) in try writer.handle(delivery, now: now()) })
            {
                log.warning(warning)
            }
        }

        let known = writer.cursor.delivered.count
        log.info(
            "recording \(cameras.isEmpty ? "every camera" : cameras.joined(separator: ", ")) on \(bus) into \(database) "
                + (known == 0
                    ? "(new streams from \(configuration.from))"
                    : "(resuming \(known) stream\(known == 1 ? "" : "s") after their last stored message; new ones from \(configuration.from))")
        )
        while !stop.isRequested {
            health.publishIfDue(counters: counters, via: publisher)
            try writing { () throws(SQLiteError) in try writer.commitIfDue(now: now()) }
            guard
                let delivery = try onBus({ () throws(ZMQError) in
                    try subscriber.receive(timeout: .milliseconds(100))
                })
            else { continue }
            try handle(delivery)
        }
        // What is already here is stored before stopping.
        let deadline = elapsed.now + .milliseconds(500)
        while elapsed.now < deadline,
            let next = try onBus({ () throws(ZMQError) in try subscriber.receive(timeout: .milliseconds(20)) }
            )
        {
            try handle(next)
        }
        try writing { () throws(SQLiteError) in try writer.close() }
        health.publish(counters: counters(), via: publisher)
        let recorder = writer.recorder
        log.info(
            "stopped: \(recorder.stored) stored, \(recorder.duplicates) already stored, "
                + "\(recorder.snapshotsSkipped) snapshots skipped, \(recorder.malformed) malformed, \(recorder.missing) missing"
        )
    }
}
