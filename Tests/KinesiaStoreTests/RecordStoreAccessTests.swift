import Foundation
import KinesiaStore
import Synchronization
import Testing

/// Who may open the recorder's database and how: recorders opening a new file together (issue
/// 19, item 15).
struct RecordStoreAccessTests {
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
