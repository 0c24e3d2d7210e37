import Foundation
import KinesiaAnalytics
import KinesiaMotion
import KinesiaStore
import Testing

/// The recorder's database: migrations, WAL, exactly-once inserts, the cursor, bad files.
struct RecordStoreTests {
    /// A path in a fresh temporary folder, removed by `done`.
    static func temporaryDatabase() throws -> (path: String, done: () -> Void) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (
            folder.appendingPathComponent("record.sqlite").path,
            { try? FileManager.default.removeItem(at: folder) }
        )
    }

    static func key(_ sequence: UInt64, stream: UInt64 = 0xfeed_0000_0000_0001, session: String = "left")
        -> RecordStore.Key
    {
        RecordStore.Key(
            streamID: stream, topic: "event/cam0/\(session)/", sequence: sequence, camera: "cam0",
            session: session)
    }

    static let rep = Rep(peak: 92.5, faults: [], start: 1, end: 3)

    @Test func anEmptyFileGetsEveryMigrationAndWAL() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        let store = try RecordStore(path: path)
        #expect(try store.version == RecordStore.schemaVersion)
        #expect(RecordStore.schemaVersion == 4)
        #expect(try store.journalMode == "wal")
        #expect(
            try store.count("events") == 0 && store.count("snapshots") == 0 && store.count("analytics") == 0
                && store.count("runs") == 0)
        try store.close()
        // Opening again changes nothing.
        let again = try RecordStore(path: path)
        #expect(try again.version == 4)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aVersion1FileIsMigratedKeepingItsRowsAndMovingItsAnalytics() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        let tempo = RepTempo(
            side: .left, number: 1, set: 1, faults: [], peak: 90, low: 2, start: 1, peakTime: 2, end: 3,
            timeUp: 0.5,
            timeAtTop: 1, timeDown: 0.5)
        do {
            let old = try RecordStore(path: path, version: 1)
            #expect(try old.version == 1)
            try old.insert(.event(t: 3, .repCompleted(Self.rep)), key: Self.key(0))
            // Version 1 had no analytics table: such records were events.
            let db = try SQLiteDatabase(path: path)
            try db.prepare(
                "INSERT INTO events (stream_id, topic, sequence, camera, session, t, type, json) VALUES (1, 'event/cam0/analytics/', 0, 'cam0', 'analytics', 3, 'repTempo', ?)"
            ).run([.text(AnalyticsJSON.encode(.repTempo(tempo), at: 3))])
            try old.close()
        }
        let store = try RecordStore(path: path)
        #expect(try store.version == RecordStore.schemaVersion)
        #expect(try store.count("events") == 1)
        #expect(try store.count("analytics") == 1)
        let events = try store.events(camera: "cam0", session: "left")
        #expect(events.map(\.event) == [.repCompleted(Self.rep)])
        let analytics = try store.analytics(camera: "cam0", session: "analytics")
        #expect(analytics.map(\.record) == [.repTempo(tempo)])
        let side = try SQLiteDatabase(path: path).text("SELECT side FROM analytics")
        #expect(side == "left")
    }

    @Test func aMessageStoredTwiceIsStoredOnce() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        let store = try RecordStore(path: path)
        try store.begin()
        #expect(try store.insert(.event(t: 3, .repCompleted(Self.rep)), key: Self.key(4)))
        #expect(try !store.insert(.event(t: 3, .repCompleted(Self.rep)), key: Self.key(4)))
        // The same sequence number of another stream (a restarted worker) is another message.
        #expect(try store.insert(.event(t: 3, .holdStarted), key: Self.key(4, stream: 2)))
        try store.commit()
        #expect(try store.count("events") == 2)
        // Across a reopen too (a restarted recorder fed a replay).
        try store.close()
        let reopened = try RecordStore(path: path)
        #expect(try !reopened.insert(.event(t: 3, .repCompleted(Self.rep)), key: Self.key(4)))
        #expect(try reopened.count("events") == 2)
    }

    @Test func theCursorKeepsTheLastSequenceOfEachStream() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        let store = try RecordStore(path: path)
        for sequence: UInt64 in [0, 1, 2, 5, 3] {
            try store.insert(.event(t: Double(sequence), .holdStarted), key: Self.key(sequence))
        }
        try store.advanceCursor(Self.key(7, session: "right"))
        #expect(
            try store.cursor() == [
                .init(topic: "event/cam0/left/", streamID: 0xfeed_0000_0000_0001, lastSequence: 5),
                .init(topic: "event/cam0/right/", streamID: 0xfeed_0000_0000_0001, lastSequence: 7),
            ])
    }

    /// A recorder killed with a transaction open (the store dropped without a commit, as kill -9
    /// leaves it) loses the rows and their cursor together: what the cursor says was seen is
    /// stored, and nothing stored is missing from the cursor.
    @Test func anUncommittedTransactionLosesItsRowsAndItsCursorTogether() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        do {
            let store = try RecordStore(path: path)
            try store.begin()
            for sequence: UInt64 in 0...3 {
                try store.insert(.event(t: Double(sequence), .holdStarted), key: Self.key(sequence))
            }
            try store.commit()
            try store.begin()
            for sequence: UInt64 in 4...9 {
                try store.insert(.event(t: Double(sequence), .holdStarted), key: Self.key(sequence))
            }
            try store.advanceCursor(Self.key(12, session: "right"))
            // No commit: the connection goes away with its transaction open.
        }
        let reopened = try RecordStore(path: path)
        #expect(try reopened.count("events") == 4)
        #expect(
            try reopened.cursor() == [
                .init(topic: "event/cam0/left/", streamID: 0xfeed_0000_0000_0001, lastSequence: 3)
            ])
    }

    /// Each snapshot stream's last stored snapshot: where a restarted recorder's thinning goes on.
    @Test func theLastKeptSnapshotOfEachStreamIsItsHighestSequence() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        let store = try RecordStore(path: path)
        func snapshot(_ sequence: UInt64, stream: UInt64, t: Double, reps: Int) throws {
            var value = MotionSnapshot()
            value.repCount = reps
            value.rejectedCount = 1
            try store.insert(
                .snapshot(t: t, value),
                key: RecordStore.Key(
                    streamID: stream, topic: "snapshot/cam0/left/", sequence: sequence, camera: "cam0",
                    session: "left"))
        }
        try snapshot(0, stream: 1, t: 0.5, reps: 0)
        try snapshot(7, stream: 1, t: 1.5, reps: 2)
        try snapshot(3, stream: 1, t: 1.0, reps: 1)
        try snapshot(2, stream: 2, t: 9.0, reps: 4)
        #expect(
            try store.lastKeptSnapshots() == [
                .init(
                    topic: "snapshot/cam0/left/", streamID: 1, sequence: 7, t: 1.5, repCount: 2,
                    rejectedCount: 1),
                .init(
                    topic: "snapshot/cam0/left/", streamID: 2, sequence: 2, t: 9.0, repCount: 4,
                    rejectedCount: 1),
            ])
    }

    @Test func snapshotsAndAnalyticsReadBackInTimeOrder() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        let store = try RecordStore(path: path)
        var snapshot = MotionSnapshot()
        for (sequence, t) in [(0, 1.0), (1, 0.5), (2, 2.0)] {
            snapshot.value = t * 10
            try store.insert(
                .snapshot(t: t, snapshot),
                key: RecordStore.Key(
                    streamID: 9, topic: "snapshot/cam0/left/", sequence: UInt64(sequence), camera: "cam0",
                    session: "left"))
        }
        let values = try store.values(camera: "cam0", session: "left")
        #expect(values.map(\.t) == [0.5, 1, 2])
        #expect(values.map(\.value) == [5, 10, 20])
        #expect(try store.sessions().map { "\($0.camera)/\($0.session)" } == ["cam0/left"])
    }

    @Test func aFileThatIsNotADatabaseIsAnErrorNotACrash() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiteError.self) { try RecordStore(path: path) }
        #expect(throws: SQLiteError.self) { try RecordStore(path: "/proc/version/none.sqlite") }
    }

    @Test func aNewerSchemaIsRefused() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        do {
            let db = try SQLiteDatabase(path: path)
            try db.execute("PRAGMA user_version=99")
        }
        #expect { try RecordStore(path: path) } throws: { "\($0)".contains("schema version 99") }
    }

    /// Run records are stored once, found by run and by patient, and a run's events are those
    /// of its stream.
    @Test func runRecordsAreStoredOnceAndFoundByRunAndPatient() throws {
        let (path, done) = try Self.temporaryDatabase()
        defer { done() }
        let store = try RecordStore(path: path)
        let started = #"{"type":"runStarted","run":"7","camera":"cam0","session":"left"}"#
        let ended = #"{"type":"runEnded","run":"7","camera":"cam0","session":"left"}"#
        func key(_ stream: UInt64, _ sequence: UInt64, topic: String) -> RecordStore.Key {
            RecordStore.Key(
                streamID: stream, topic: topic, sequence: sequence, camera: "cam0", session: "left")
        }
        #expect(
            try store.insert(
                .run(type: "runStarted", run: 7, patient: "p-1", json: started),
                key: key(5, 0, topic: "session/cam0/left/")))
        #expect(
            !(try store.insert(
                .run(type: "runStarted", run: 7, patient: "p-1", json: started),
                key: key(5, 0, topic: "session/cam0/left/"))))
        #expect(
            try store.insert(
                .run(type: "runEnded", run: 7, patient: nil, json: ended),
                key: key(5, 1, topic: "session/cam0/left/")))
        try store.insert(.event(t: 3, .repCompleted(Self.rep)), key: key(5, 0, topic: "event/cam0/left/"))
        try store.insert(.event(t: 4, .repCompleted(Self.rep)), key: key(6, 0, topic: "event/cam0/left/"))
        #expect(try store.runLines().map(\.json) == [started, ended])
        #expect(try store.runLines(run: 7).map(\.streamID) == [5, 5])
        #expect(try store.runLines(run: 8).isEmpty)
        #expect(try store.runs(patient: "p-1") == [7])
        #expect(try store.runs(patient: "p-2") == [])
        #expect(try store.eventLines(camera: "cam0", session: "left", streamID: 5).count == 1)
    }
}
