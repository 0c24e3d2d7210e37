import KinesiaClient
import KinesiaService
import KinesiaStore
import KinesiaWire

/// The database side of `kinesia record`: what an ``ExactlyOnceSubscriber`` delivers goes
/// through a ``Recorder`` into a ``RecordStore``, in transactions that move the cursor with the
/// rows. No socket and no clock: time is given by the caller.
///
/// **The cursor is the database.** Each row and the `streams` row of its stream (the last
/// sequence number stored or skipped) are written in the same transaction, committed every
/// ``batchSize`` messages or ``batchAge`` and on ``close()``. After a crash at any moment the
/// rows and the cursor agree: a delivered message that was not committed is neither stored nor
/// counted as seen. On open, ``cursor`` (the stored positions, to give the subscriber) and
/// each snapshot stream's last kept snapshot (the ``Recorder``'s thinning state) are read back,
/// so a restarted recorder asks replay for exactly what follows what it stored and keeps the
/// same snapshots a recorder that never stopped keeps.
///
/// ```swift
/// let writer = try RecordWriter(path: "clinic.sqlite", snapshotInterval: 0.2, now: .zero)
/// let subscriber = try ExactlyOnceSubscriber(context: zmq, bus: bus, topics: topics, from: .beginning, cursor: writer.cursor)
/// while let delivery = try subscriber.receive(timeout: .milliseconds(100)) {
///     for warning in try writer.handle(delivery, now: clock.now - origin) { log.warning(warning) }
/// }
/// try writer.close()
/// ```
final class RecordWriter {
    /// Messages per transaction, at most.
    static let batchSize = 256
    /// The longest a delivered message waits to be committed.
    static let batchAge = Duration.milliseconds(200)

    /// The decisions and counters.
    private(set) var recorder: Recorder
    /// The positions stored when the database was opened: per stream, the last sequence number
    /// stored or skipped (rows whose topic or stream id does not read are left out).
    let cursor: ReplayCursor
    /// Messages delivered but not committed yet.
    private(set) var pending = 0
    /// The warnings of events that cannot be had any more, counted and throttled.
    private(set) var lostWarnings = WarningThrottle()
    private let store: RecordStore
    private var lastCommit: Duration

    /// Opens (or creates) the database and reads its cursor and thinning state.
    /// - Parameters:
    ///   - path: The database file.
    ///   - snapshotInterval: `--snapshot-interval`.
    ///   - now: The time, from any fixed origin.
    /// - Throws: ``SQLiteError`` when the database cannot be opened or read.
    init(path: String, snapshotInterval: Double, now: Duration) throws(SQLiteError) {
        let store = try RecordStore(path: path)
        self.store = store
        cursor = Self.replayCursor(try store.cursor())
        recorder = Recorder(snapshotInterval: snapshotInterval, restoring: try store.lastKeptSnapshots())
        lastCommit = now
    }

    /// The stored cursor rows as a ``ReplayCursor``.
    static func replayCursor(_ rows: [RecordStore.Cursor]) -> ReplayCursor {
        var delivered: [ReplayStreamKey: UInt64] = [:]
        for row in rows where row.streamID != 0 {
            guard let topic = try? Topic(parsing: row.topic) else { continue }
            delivered[ReplayStreamKey(topic: topic, stream: StreamID(rawValue: row.streamID))] =
                row.lastSequence
        }
        return ReplayCursor(delivered: delivered)
    }

    /// Stores (or skips) what `delivery` carries, commits when the batch is full or old.
    /// - Returns: What to tell the operator.
    /// - Throws: ``SQLiteError`` when the database cannot be written.
    func handle(_ delivery: ExactlyOnceSubscriber.Delivery, now: Duration) throws(SQLiteError) -> [String] {
        var warnings: [String] = []
        switch delivery {
        case .message(let message):
            for value in BusMessage.messages(from: .message(message, .inOrder)) {
                if let warning = try apply(recorder.decide(value)) { warnings.append(warning) }
            }
        case .lost(let topic, let sequences):
            recorder.missing.addSaturating(sequences.width)
            if let line = lostWarnings.admit(
                "lost",
                "\(topic): #\(sequences.lowerBound)..<#\(sequences.upperBound) cannot be had any more "
                    + "(not retained by its publisher, or a stream it does not know): not recorded")
            {
                warnings.append(line)
            }
        case .malformed(let topic, let reason):
            let value = BusMessage.malformed(MalformedMessage(topic: topic, reason: .wire(reason)))
            if let warning = try apply(recorder.decide(value)) { warnings.append(warning) }
        case .health:
            break
        }
        try commitIfDue(now: now)
        return warnings
    }

    private func apply(_ decision: Recorder.Decision?) throws(SQLiteError) -> String? {
        switch decision {
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
            return text
        case .none:
            break
        }
        return nil
    }

    /// Commits when ``batchSize`` messages wait or the oldest has waited ``batchAge``.
    func commitIfDue(now: Duration) throws(SQLiteError) {
        if pending >= Self.batchSize || (pending > 0 && now - lastCommit >= Self.batchAge) {
            try commit(now: now)
        }
    }

    /// Commits the rows and cursor positions written so far.
    func commit(now: Duration) throws(SQLiteError) {
        try store.commit()
        pending = 0
        lastCommit = now
    }

    /// Commits and closes the database.
    func close() throws(SQLiteError) {
        try store.commit()
        pending = 0
        try store.close()
    }
}
