import CSQLite
public import KinesiaAnalytics
public import KinesiaMotion
import KinesiaSystem

/// The SQLite database of `kinesia record`: every event, analytics record and periodic snapshot
/// of the bus, each stored once, and the report's queries.
///
/// - **WAL** journal mode (readers, such as `kinesia report`, never block the recorder), and
///   `synchronous=NORMAL`.
/// - **Versioned schema**: `PRAGMA user_version` is the number of ``migrations`` applied; opening
///   a file applies the missing ones in one transaction each (an empty file gets all of them).
/// - **Exactly once**: every row is keyed by its sender's stream id, topic and sequence number
///   (`PRIMARY KEY`, `INSERT OR IGNORE`), so a message delivered twice (a replay, a restarted
///   recorder reading again) is stored once.
/// - **Cursor**: `streams` keeps, for each topic and stream, the last sequence number stored
///   (or skipped on purpose), where a recorder that restarts asks a replay to resume
///   (``cursor()``). ``insert(_:key:)`` and ``advanceCursor(_:)`` move it in the transaction
///   that stores the row, so after a crash (kill -9, a power cut after `synchronous=NORMAL`'s
///   last sync) the cursor and the rows agree: what was not committed is neither stored nor
///   counted as seen, and is asked for again.
/// - **Thinning state**: ``lastKeptSnapshots()`` gives, per snapshot stream, the last snapshot
///   stored, from which a recorder that restarts takes up its choice of snapshots to keep.
/// - Inserts are batched in transactions by the caller (``begin()``, ``commit()``).
///
/// The schema is in `docs/record-schema.md`.
///
/// ```swift
/// let store = try RecordStore(path: "clinic.sqlite")
/// try store.begin()
/// let new = try store.insert(.event(t: 2.5, .holdStarted), key: key)
/// try store.commit()
/// ```
public final class RecordStore {
    /// Where a message came from: its sender's stream, its topic and sequence number, and the
    /// camera and session the topic names.
    public struct Key: Hashable, Sendable {
        /// The sender's stream id (the wire header's, new at every start of the sender).
        public var streamID: UInt64
        /// The topic, `event/<camera>/<session>/`...
        public var topic: String
        /// The sequence number on the topic.
        public var sequence: UInt64
        /// The camera of the topic.
        public var camera: String
        /// The session of the topic.
        public var session: String

        /// Makes a key.
        public init(streamID: UInt64, topic: String, sequence: UInt64, camera: String, session: String) {
            self.streamID = streamID
            self.topic = topic
            self.sequence = sequence
            self.camera = camera
            self.session = session
        }
    }

    /// What is stored.
    public enum Payload: Hashable, Sendable {
        /// A motion event at pose time `t`.
        case event(t: Double, MotionEvent)
        /// A snapshot after the pose at `t`.
        case snapshot(t: Double, MotionSnapshot)
        /// An analytics record made at pose time `t`.
        case analytics(t: Double, AnalyticsRecord)
        /// A run record of `session/<camera>/<session>/` (`runStarted`, `runEnded`): its type,
        /// run, patient (when it names one) and JSON as sent.
        case run(type: String, run: UInt64, patient: String?, json: String)
    }

    /// One topic's stream and the last sequence number stored of it.
    public struct Cursor: Hashable, Sendable {
        /// Makes a cursor.
        public init(topic: String, streamID: UInt64, lastSequence: UInt64) {
            self.topic = topic
            self.streamID = streamID
            self.lastSequence = lastSequence
        }

        /// The topic.
        public var topic: String
        /// The sender's stream id.
        public var streamID: UInt64
        /// The last sequence number stored (or skipped on purpose: snapshots between two kept).
        public var lastSequence: UInt64
    }

    /// The last snapshot stored of one stream: where the thinning of that stream stands.
    public struct KeptSnapshot: Hashable, Sendable {
        /// Makes a value.
        public init(
            topic: String, streamID: UInt64, sequence: UInt64, t: Double, repCount: Int, rejectedCount: Int
        ) {
            self.topic = topic
            self.streamID = streamID
            self.sequence = sequence
            self.t = t
            self.repCount = repCount
            self.rejectedCount = rejectedCount
        }

        /// The topic, `snapshot/<camera>/<session>/`.
        public var topic: String
        /// The sender's stream id.
        public var streamID: UInt64
        /// Its sequence number (the highest stored of the stream).
        public var sequence: UInt64
        /// Its pose time.
        public var t: Double
        /// Its rep count.
        public var repCount: Int
        /// Its rejected-rep count.
        public var rejectedCount: Int
    }

    /// The schema, one migration per version: `migrations[0]` makes version 1 from an empty file.
    public static let migrations: [String] = [
        // 1: events, snapshots, and the cursor of each stream.
        """
        CREATE TABLE events (
            stream_id INTEGER NOT NULL, topic TEXT NOT NULL, sequence INTEGER NOT NULL,
            camera TEXT NOT NULL, session TEXT NOT NULL, t REAL NOT NULL, type TEXT NOT NULL,
            json TEXT NOT NULL,
            PRIMARY KEY (stream_id, topic, sequence));
        CREATE TABLE snapshots (
            stream_id INTEGER NOT NULL, topic TEXT NOT NULL, sequence INTEGER NOT NULL,
            camera TEXT NOT NULL, session TEXT NOT NULL, t REAL NOT NULL, value REAL,
            rep_count INTEGER NOT NULL, rejected_count INTEGER NOT NULL, json TEXT NOT NULL,
            PRIMARY KEY (stream_id, topic, sequence));
        CREATE TABLE streams (
            topic TEXT NOT NULL, stream_id INTEGER NOT NULL, last_sequence INTEGER NOT NULL,
            PRIMARY KEY (topic, stream_id));
        """,
        // 2: analytics records in their own table (version 1 kept them with the events), and the
        // indexes of the report's queries.
        """
        CREATE TABLE analytics (
            stream_id INTEGER NOT NULL, topic TEXT NOT NULL, sequence INTEGER NOT NULL,
            camera TEXT NOT NULL, session TEXT NOT NULL, t REAL NOT NULL, type TEXT NOT NULL,
            side TEXT, set_number INTEGER, json TEXT NOT NULL,
            PRIMARY KEY (stream_id, topic, sequence));
        INSERT INTO analytics
            SELECT stream_id, topic, sequence, camera, session, t, type, json_extract(json, '$.side'),
                json_extract(json, '$.set'), json
            FROM events WHERE type IN ('repTempo', 'repSymmetry', 'setSummary');
        DELETE FROM events WHERE type IN ('repTempo', 'repSymmetry', 'setSummary');
        CREATE INDEX events_by_session ON events (camera, session, t);
        CREATE INDEX snapshots_by_session ON snapshots (camera, session, t);
        CREATE INDEX analytics_by_camera ON analytics (camera, t);
        """,
        // 3: the run records (a run is one stream of its session: its events and snapshots are
        // those of the run record's stream id).
        """
        CREATE TABLE runs (
            stream_id INTEGER NOT NULL, topic TEXT NOT NULL, sequence INTEGER NOT NULL,
            camera TEXT NOT NULL, session TEXT NOT NULL, type TEXT NOT NULL, run INTEGER NOT NULL,
            patient TEXT, json TEXT NOT NULL,
            PRIMARY KEY (stream_id, topic, sequence));
        CREATE INDEX runs_by_run ON runs (run);
        CREATE INDEX runs_by_patient ON runs (patient);
        """,
        // 4: when each run record was recorded (UTC, ISO 8601): the date of a run.
        """
        ALTER TABLE runs ADD COLUMN recorded_at TEXT;
        """,
    ]

    /// The version a store opened with ``init(path:version:)``'s default has.
    public static var schemaVersion: Int { migrations.count }

    private let db: SQLiteDatabase
    private var statements: [String: SQLiteStatement] = [:]
    private var inTransaction = false

    /// Opens (or creates) the store at `path`, in WAL mode, migrated to `version`, to write it.
    ///
    /// Several processes may open a new file at once (two recorders started together): each
    /// migration runs in a `BEGIN IMMEDIATE` transaction that reads the schema version again
    /// once it holds the write lock, so the openers take turns (waiting up to the busy timeout,
    /// 5 s) and a migration another one applied meanwhile is not applied twice.
    /// - Parameters:
    ///   - path: The database file.
    ///   - version: The schema version to migrate to (tests make older files with it).
    /// - Throws: ``SQLiteError``: the file cannot be opened or written (a read-only file or file
    ///   system: `SQLITE_READONLY`, said at once rather than at the first insert), is not a
    ///   database, or has a newer schema than this program knows.
    public init(path: String, version: Int = RecordStore.schemaVersion) throws(SQLiteError) {
        db = try SQLiteDatabase(path: path)
        if db.isReadOnly { throw Self.readOnlyError(path, SQLiteError(code: SQLITE_READONLY, message: "")) }
        let mode = try Self.setWAL(db)
        guard mode.lowercased() == "wal" else {
            throw SQLiteError(code: 1, message: "\(path): WAL mode refused (journal_mode is \(mode))")
        }
        try db.execute("PRAGMA synchronous=NORMAL")
        migrating: while true {
            // The write lock first, then the version: what another opener committed before we
            // got the lock is seen. The empty transaction of an up-to-date file also proves
            // that the file can be written.
            do throws(SQLiteError) {
                try db.execute("BEGIN IMMEDIATE")
            } catch {
                if error.isReadOnly { throw Self.readOnlyError(path, error) }
                throw error
            }
            do throws(SQLiteError) {
                let current = Int(try db.integer("PRAGMA user_version") ?? 0)
                guard current <= Self.migrations.count else { throw Self.newerSchemaError(path, current) }
                guard current < min(version, Self.migrations.count) else {
                    try db.execute("COMMIT")
                    break migrating
                }
                try db.execute(Self.migrations[current])
                try db.execute("PRAGMA user_version=\(current + 1)")
                try db.execute("COMMIT")
            } catch {
                try? db.execute("ROLLBACK")
                if error.isReadOnly { throw Self.readOnlyError(path, error) }
                throw error
            }
        }
    }

    /// Opens the store at `path` to read it only, as `kinesia report` does: the file is never
    /// written, its journal mode is left alone, and nothing is made next to it.
    ///
    /// A file that SQLite cannot open that way (a WAL file on read-only media, without its
    /// `-shm` file) is opened as immutable (``SQLiteDatabase/Access/immutable``): rows still in
    /// a `-wal` file are then not read.
    /// - Parameter path: The database file; it must exist.
    /// - Throws: ``SQLiteError``: the file cannot be opened or read, is not a database, or has
    ///   another schema version than this program's (an older file is migrated by the first
    ///   `kinesia record` that opens it).
    public init(readingOnly path: String) throws(SQLiteError) {
        var opened = try SQLiteDatabase(path: path, access: .readOnly)
        var current: Int
        do throws(SQLiteError) {
            current = Int(try opened.integer("PRAGMA user_version") ?? 0)
        } catch {
            guard error.code & 0xff == SQLITE_CANTOPEN else { throw error }
            opened.close()
            opened = try SQLiteDatabase(path: path, access: .immutable)
            current = Int(try opened.integer("PRAGMA user_version") ?? 0)
        }
        db = opened
        guard current <= Self.migrations.count else { throw Self.newerSchemaError(path, current) }
        guard current == Self.migrations.count else {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message:
                    "\(path) has schema version \(current), older than this kinesia's \(Self.migrations.count); "
                    + "it is read without changing it: let kinesia record open it once to migrate it")
        }
    }

    /// Sets WAL mode, retrying while another connection holds a lock (up to 5 s). Changing the
    /// journal mode of a new file needs an exclusive lock, and SQLite answers `SQLITE_BUSY`
    /// there without calling the busy handler while it holds a shared lock that another
    /// connection waits to upgrade (to avoid a deadlock): a second recorder opening the file
    /// at the same moment must wait its turn, not fail.
    private static func setWAL(_ db: SQLiteDatabase) throws(SQLiteError) -> String {
        var attempts = 0
        while true {
            do throws(SQLiteError) {
                return try db.text("PRAGMA journal_mode=WAL") ?? ""
            } catch {
                attempts += 1
                guard error.code & 0xff == SQLITE_BUSY, attempts < 500 else { throw error }
                ThreadSleep.sleep(.milliseconds(10))
            }
        }
    }

    private static func newerSchemaError(_ path: String, _ current: Int) -> SQLiteError {
        SQLiteError(
            code: SQLITE_ERROR,
            message:
                "\(path) has schema version \(current); this kinesia knows up to \(Self.migrations.count)")
    }

    private static func readOnlyError(_ path: String, _ error: SQLiteError) -> SQLiteError {
        SQLiteError(
            code: error.code,
            message:
                "\(path) cannot be written (a read-only file, directory or file system): kinesia record needs "
                + "to write it and its -wal and -shm files next to it (kinesia report reads such a file)")
    }

    /// Closes the database (a transaction under way is committed first).
    public func close() throws(SQLiteError) {
        if inTransaction { try commit() }
        statements.removeAll()
        db.close()
    }

    /// The schema version of the file (`PRAGMA user_version`).
    public var version: Int {
        get throws(SQLiteError) { Int(try db.integer("PRAGMA user_version") ?? 0) }
    }

    /// The journal mode (`wal`).
    public var journalMode: String {
        get throws(SQLiteError) { try db.text("PRAGMA journal_mode") ?? "" }
    }

    /// Starts a transaction (nothing when one is under way).
    public func begin() throws(SQLiteError) {
        guard !inTransaction else { return }
        try db.execute("BEGIN")
        inTransaction = true
    }

    /// Commits the transaction under way, if any.
    public func commit() throws(SQLiteError) {
        guard inTransaction else { return }
        try db.execute("COMMIT")
        inTransaction = false
    }

    private func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try db.prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// Stores `payload` under `key`, unless a row with that key is there already, and moves
    /// the stream's cursor on.
    /// - Returns: `true` when it was new, `false` when it was already stored.
    @discardableResult
    public func insert(_ payload: Payload, key: Key) throws(SQLiteError) -> Bool {
        let common: [SQLiteStatement.Value] = [
            .integer(Int64(bitPattern: key.streamID)), .text(key.topic),
            .integer(Int64(bitPattern: key.sequence)),
            .text(key.camera), .text(key.session),
        ]
        switch payload {
        case .event(let t, let event):
            try statement(
                "INSERT OR IGNORE INTO events (stream_id, topic, sequence, camera, session, t, type, json) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            ).run(common + [.real(t), .text(event.name), .text(MotionJSON.encode(event, at: t))])
        case .snapshot(let t, let snapshot):
            try statement(
                "INSERT OR IGNORE INTO snapshots (stream_id, topic, sequence, camera, session, t, value, "
                    + "rep_count, rejected_count, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ).run(
                common + [
                    .real(t), snapshot.value.map { .real($0) } ?? .null, .integer(Int64(snapshot.repCount)),
                    .integer(Int64(snapshot.rejectedCount)), .text(MotionJSON.encode(snapshot, at: t)),
                ])
        case .analytics(let t, let record):
            let (side, set) = Self.sideAndSet(record)
            try statement(
                "INSERT OR IGNORE INTO analytics (stream_id, topic, sequence, camera, session, t, type, side, "
                    + "set_number, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ).run(
                common + [
                    .real(t), .text(record.name), side.map { .text($0.rawValue) } ?? .null,
                    .integer(Int64(set)),
                    .text(AnalyticsJSON.encode(record, at: t)),
                ])
        case .run(let type, let run, let patient, let json):
            try statement(
                "INSERT OR IGNORE INTO runs (stream_id, topic, sequence, camera, session, type, run, patient, json, "
                    + "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"
            ).run(
                common + [
                    .text(type), .integer(Int64(bitPattern: run)), patient.map { .text($0) } ?? .null,
                    .text(json),
                ])
        }
        let new = db.changes > 0
        try advanceCursor(key)
        return new
    }

    /// Records that `key`'s message was seen (stored or skipped on purpose).
    public func advanceCursor(_ key: Key) throws(SQLiteError) {
        try statement(
            "INSERT INTO streams (topic, stream_id, last_sequence) VALUES (?, ?, ?) "
                + "ON CONFLICT (topic, stream_id) DO UPDATE SET last_sequence = max(last_sequence, excluded.last_sequence)"
        ).run([
            .text(key.topic), .integer(Int64(bitPattern: key.streamID)),
            .integer(Int64(bitPattern: key.sequence)),
        ])
    }

    private static func sideAndSet(_ record: AnalyticsRecord) -> (BodySide?, Int) {
        switch record {
        case .repTempo(let tempo): (tempo.side, tempo.set)
        case .repSymmetry(let pair): (nil, pair.set)
        case .setSummary(let summary): (summary.side, summary.set)
        }
    }

    // MARK: Reading

    /// Every stream's cursor, by topic then stream id.
    public func cursor() throws(SQLiteError) -> [Cursor] {
        try statement("SELECT topic, stream_id, last_sequence FROM streams ORDER BY topic, stream_id").rows {
            Cursor(
                topic: $0.text(0), streamID: UInt64(bitPattern: $0.integer(1)),
                lastSequence: UInt64(bitPattern: $0.integer(2)))
        }
    }

    /// Per snapshot stream, the snapshot stored with the highest sequence number (the last one
    /// kept: a stream's messages are stored in order), by topic then stream id.
    public func lastKeptSnapshots() throws(SQLiteError) -> [KeptSnapshot] {
        try statement(
            "SELECT s.topic, s.stream_id, s.sequence, s.t, s.rep_count, s.rejected_count FROM snapshots s "
                + "JOIN (SELECT topic, stream_id, max(sequence) AS last FROM snapshots GROUP BY topic, stream_id) k "
                + "ON s.topic = k.topic AND s.stream_id = k.stream_id AND s.sequence = k.last "
                + "ORDER BY s.topic, s.stream_id"
        ).rows {
            KeptSnapshot(
                topic: $0.text(0), streamID: UInt64(bitPattern: $0.integer(1)),
                sequence: UInt64(bitPattern: $0.integer(2)), t: $0.real(3) ?? 0, repCount: Int($0.integer(4)),
                rejectedCount: Int($0.integer(5)))
        }
    }

    /// The number of rows of `table` (`events`, `snapshots`, `analytics`).
    public func count(_ table: String) throws(SQLiteError) -> Int {
        Int(try db.integer("SELECT count(*) FROM \(table)") ?? 0)
    }

    /// The cameras and sessions with rows, sorted.
    public func sessions() throws(SQLiteError) -> [(camera: String, session: String)] {
        try statement(
            "SELECT camera, session FROM events UNION SELECT camera, session FROM snapshots "
                + "UNION SELECT camera, session FROM analytics ORDER BY 1, 2"
        ).rows { ($0.text(0), $0.text(1)) }
    }

    /// The JSON lines of a session's events, in pose-time order (then stream and sequence).
    public func eventLines(camera: String, session: String) throws(SQLiteError) -> [String] {
        try statement(
            "SELECT json FROM events WHERE camera = ? AND session = ? ORDER BY t, stream_id, sequence"
        ).rows([.text(camera), .text(session)]) { $0.text(0) }
    }

    /// A session's events, decoded, in pose-time order.
    public func events(camera: String, session: String) throws(SQLiteError) -> [(
        t: Double, event: MotionEvent
    )] {
        try eventLines(camera: camera, session: session).compactMap { try? MotionJSON.decodeEvent($0) }
    }

    /// The run records stored (`runStarted`, `runEnded`), by run then by their place in the
    /// run's stream: every run's, or only run `run`'s.
    public func runLines(run: UInt64? = nil) throws(SQLiteError) -> [(
        streamID: UInt64, camera: String, session: String, json: String
    )] {
        try runRows(run: run).map { ($0.streamID, $0.camera, $0.session, $0.json) }
    }

    /// ``runLines(run:)`` with when each record was recorded (UTC, `2026-12-04T09:30:00Z`;
    /// `nil` for a record kept by a version before 4).
    public func runRows(run: UInt64? = nil) throws(SQLiteError) -> [(
        streamID: UInt64, camera: String, session: String, json: String, recordedAt: String?
    )] {
        let read = { (row: SQLiteStatement) in
            (
                UInt64(bitPattern: row.integer(0)), row.text(1), row.text(2), row.text(3),
                row.isNull(4) ? nil : row.text(4)
            )
        }
        guard let run else {
            return try statement(
                "SELECT stream_id, camera, session, json, recorded_at FROM runs ORDER BY run, sequence"
            ).rows([], read)
        }
        return try statement(
            "SELECT stream_id, camera, session, json, recorded_at FROM runs WHERE run = ? ORDER BY sequence"
        ).rows([.integer(Int64(bitPattern: run))], read)
    }

    /// The runs of the patient `patient` (their `runStarted` named them), in order.
    public func runs(patient: String) throws(SQLiteError) -> [UInt64] {
        try statement(
            "SELECT DISTINCT run FROM runs WHERE patient = ? ORDER BY run"
        ).rows([.text(patient)]) { UInt64(bitPattern: $0.integer(0)) }
    }

    /// The JSON lines of the events of one stream of a session (a run's: a run is one stream),
    /// in order.
    public func eventLines(camera: String, session: String, streamID: UInt64) throws(SQLiteError) -> [String]
    {
        try statement(
            "SELECT json FROM events WHERE camera = ? AND session = ? AND stream_id = ? ORDER BY sequence"
        ).rows([.text(camera), .text(session), .integer(Int64(bitPattern: streamID))]) { $0.text(0) }
    }

    /// The (time, value) points of one stream of a session (a run's), in order.
    public func values(camera: String, session: String, streamID: UInt64) throws(SQLiteError) -> [(
        t: Double, value: Double?
    )] {
        try statement(
            "SELECT t, value FROM snapshots WHERE camera = ? AND session = ? AND stream_id = ? ORDER BY sequence"
        ).rows([.text(camera), .text(session), .integer(Int64(bitPattern: streamID))]) {
            ($0.real(0) ?? 0, $0.real(1))
        }
    }

    /// A session's stored snapshots as (time, value) points, in pose-time order.
    public func values(camera: String, session: String) throws(SQLiteError) -> [(t: Double, value: Double?)] {
        try statement(
            "SELECT t, value FROM snapshots WHERE camera = ? AND session = ? ORDER BY t, stream_id, sequence"
        ).rows([.text(camera), .text(session)]) { ($0.real(0) ?? 0, $0.real(1)) }
    }

    /// The analytics records of one stream of a session (a run), in pose-time order.
    public func analytics(camera: String, session: String, streamID: UInt64) throws(SQLiteError)
        -> [AnalyticsRecord]
    {
        try statement(
            "SELECT json FROM analytics WHERE camera = ? AND session = ? AND stream_id = ? ORDER BY t, sequence"
        ).rows([.text(camera), .text(session), .integer(Int64(bitPattern: streamID))]) { $0.text(0) }
            .compactMap { try? AnalyticsJSON.decode($0).record }
    }

    /// A session's analytics records, decoded, in pose-time order.
    public func analytics(camera: String, session: String) throws(SQLiteError) -> [(
        t: Double, record: AnalyticsRecord
    )] {
        try statement(
            "SELECT json FROM analytics WHERE camera = ? AND session = ? ORDER BY t, stream_id, sequence"
        ).rows([.text(camera), .text(session)]) { $0.text(0) }.compactMap { try? AnalyticsJSON.decode($0) }
    }
}
