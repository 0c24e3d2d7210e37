import KinesiaClient
import KinesiaService
import KinesiaStore
import KinesiaTestSupport
import Testing

@testable import KinesiaRecorder

/// What a recorder that cannot open its database tells its user: the typed error of its own
/// target, naming the database, with SQLite's error underneath.
struct RecordServiceErrorTests {
    @Test func aDatabaseInAMissingFolderCannotBeOpenedAndIsNamed() throws {
        let scratch = try ScratchDirectory("record-error")
        let bus = try BusAddress(parsing: scratch.path("bus"))
        let database = scratch.path("missing/record.db")
        let service = RecordService(
            RecordService.Configuration(
                process: BusProcessIdentity(bus: bus, name: "record"), database: database),
            log: Logger(label: "record", sink: CapturedText()))
        let error = #expect(throws: RecordServiceError.self) { try service.run(until: StopToken()) }
        guard case .databaseUnopenable(let path, let underlying) = error else {
            Issue.record("not a database that cannot be opened: \(String(describing: error))")
            return
        }
        #expect(path == database)
        #expect(error?.description == "cannot open the database \(database): \(underlying)")
        #expect(error?.isUsageError == false, "kinesia record exits 1, as before")
    }
}
