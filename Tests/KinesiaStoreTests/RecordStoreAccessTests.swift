import Foundation
import KinesiaMotion
import KinesiaStore
import KinesiaTestSupport
import Synchronization
import Testing

/// Who may open the recorder's database and how: read-only files and media (issue 19, item 10)
/// and recorders opening a new file together (item 15).
struct RecordStoreAccessTests {
    /// A store at `path` with one event, closed (its `-wal` and `-shm` files gone).
    static func recorded(_ path: String) throws {
        let store = try RecordStore(path: path)
        try store.insert(.event(t: 3, .repCompleted(RecordStoreTests.rep)), key: RecordStoreTests.key(0))
        try store.close()
    }

    @Test func aDatabaseOnReadOnlyMediaIsReadWithoutMakingAnyFileNextToIt() throws {
        let (path, done) = try RecordStoreTests.temporaryDatabase()
        defer { done() }
        try Self.recorded(path)
        let folder = (path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["record.sqlite"])
        // Nothing can be written in the folder nor to the file, not even by root.
        let immutable = try ImmutableFiles([path, folder])
        defer { immutable.release() }
        let store = try RecordStore(readingOnly: path)
        #expect(
            try store.events(camera: "cam0", session: "left").map(\.event) == [
                .repCompleted(RecordStoreTests.rep)
            ])
        #expect(try store.version == RecordStore.schemaVersion)
        try store.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["record.sqlite"])
    }

    @Test func readingOnlyLeavesTheJournalModeAndTheFileAsTheyWere() throws {
        let (path, done) = try RecordStoreTests.temporaryDatabase()
        defer { done() }
        try Self.recorded(path)
        // A copy made with sqlite3's .backup or another tool may be in rollback-journal mode.
        let db = try SQLiteDatabase(path: path)
        #expect(try db.text("PRAGMA journal_mode=DELETE") == "delete")
        db.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try RecordStore(readingOnly: path)
        #expect(try store.journalMode == "delete")
        #expect(try store.count("events") == 1)
        try store.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func readingOnlyNeverCreatesAMissingFile() throws {
        let (path, done) = try RecordStoreTests.temporaryDatabase()
        defer { done() }
        #expect(throws: SQLiteError.self) { try RecordStore(readingOnly: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aReadOnlyDatabaseIsRefusedWhenOpenedToRecordNotAtTheFirstInsert() throws {
        let (path, done) = try RecordStoreTests.temporaryDatabase()
        defer { done() }
        try Self.recorded(path)
        let immutable = try ImmutableFiles([path])
        defer { immutable.release() }
        let error = #expect(throws: SQLiteError.self) { try RecordStore(path: path) }
        #expect(error?.isReadOnly == true)
        #expect(error?.message.contains("\(path) cannot be written") == true, "\(String(describing: error))")
    }

    @Test func recordersOpeningANewFileTogetherEachMigrateItOnce() throws {
        // Each round: a new file, several openers at once; every one must open it at the
        // current version (before, the later ones ran migration 1 again: "table events already
        // exists").
        let openers = 4
        for _ in 0..<12 {
            let (path, done) = try RecordStoreTests.temporaryDatabase()
            defer { done() }
            let failures = Mutex<[String]>([])
            let versions = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: openers) { _ in
                do {
                    let store = try RecordStore(path: path)
                    let version = try store.version
                    versions.withLock { $0.append(version) }
                    try store.close()
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(versions.withLock { $0 } == Array(repeating: RecordStore.schemaVersion, count: openers))
            let store = try RecordStore(path: path)
            #expect(try store.count("events") == 0)
            try store.close()
        }
    }
}
