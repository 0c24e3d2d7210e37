import Foundation
import KinesiaMotion
import KinesiaStore
import KinesiaTestSupport
import Testing

@testable import KinesiaCLI

/// `kinesia report` and `kinesia record` on databases they cannot write (issue 19, item 10).
/// Tests run as root, for whom `chmod` changes nothing: the files are made immutable instead
/// (``ImmutableFiles``), which refuses writes to everyone, as read-only media do.
struct RecordDatabaseAccessTests {
    /// A folder with `media/record.sqlite` holding one event of `cam0/left`; `done` removes it.
    static func recordedDatabase() throws -> (folder: String, database: String, done: () -> Void) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-ro-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder + "/media", withIntermediateDirectories: true)
        let database = folder + "/media/record.sqlite"
        let store = try RecordStore(path: database)
        try store.insert(
            .event(t: 3, .repCompleted(Rep(peak: 92, faults: [], start: 1, end: 3))),
            key: RecordStore.Key(
                streamID: 1, topic: "event/cam0/left/", sequence: 0, camera: "cam0", session: "left"))
        try store.close()
        return (folder, database, { try? FileManager.default.removeItem(atPath: folder) })
    }

    @Test func reportReadsADatabaseOnReadOnlyMediaAndMakesNothingThere() async throws {
        let (folder, database, done) = try Self.recordedDatabase()
        defer { done() }
        let immutable = try ImmutableFiles([database, folder + "/media"])
        defer { immutable.release() }
        let run = await CommandRun.run(["report", "--db", database, "--out", folder + "/report.html"])
        #expect(run.status == 0, "\(run.error)")
        #expect(FileManager.default.fileExists(atPath: folder + "/report.html"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/media") == ["record.sqlite"])
    }

    @Test func recordOnADatabaseItCannotWriteFailsAtItsStartSayingSo() async throws {
        let (folder, database, done) = try Self.recordedDatabase()
        defer { done() }
        let immutable = try ImmutableFiles([database])
        defer { immutable.release() }
        // A process, not in-process: before, it did not fail at its start but waited for the bus
        // (and failed at its first insert), so the test stops it after a while.
        let record = try KinesiaProcess(
            "record", ["record", "--db", database, "--bus", folder + "/bus"], directory: folder)
        let status = await record.waitForExit(timeout: .seconds(10))
        if status == nil { await record.stop() }
        #expect(status == 1, "\(record.diagnostics)")
        #expect(record.errorText.contains("\(database) cannot be written"), "\(record.diagnostics)")
    }
}
