import Foundation
import KinesiaClient
import KinesiaService
import KinesiaStore
import KinesiaTestSupport
import KinesiaWeb
import Testing

/// What a dashboard server and its run archive tell their user when what they were given
/// cannot be used: the typed error of their own target, with the error underneath.
struct WebServiceErrorTests {
    @Test func aTokensDirectoryThatIsAFileCannotBeUsed() throws {
        let scratch = try ScratchDirectory("web-error")
        #expect(FileManager.default.createFile(atPath: scratch.path("tokens"), contents: Data()))
        let service = WebService(
            WebService.Configuration(
                process: BusProcessIdentity(bus: try BusAddress(parsing: scratch.path("bus")), name: "web"),
                host: "127.0.0.1", port: 0, tokens: scratch.path("tokens")),
            log: Logger(label: "web", sink: CapturedText()))
        let error = #expect(throws: WebServiceError.self) { try service.run(until: StopToken()) }
        guard case .tokens(let underlying) = error, case .directory = underlying else {
            Issue.record("not a tokens' directory that cannot be used: \(String(describing: error))")
            return
        }
        #expect(error?.description == underlying.description)
        #expect(error?.description.hasPrefix("cannot use the tokens' directory: ") == true)
        #expect(error?.isUsageError == false, "kinesia web exits 1, as before")
    }

    @Test func aMissingRecordDatabaseCannotBeRead() throws {
        let scratch = try ScratchDirectory("web-error")
        let archive = RunArchive(path: scratch.path("missing/record.db"))
        let runs = #expect(throws: RunArchiveError.self) { try archive.runsJSON(patient: nil) }
        guard case .database(let underlying) = runs else {
            Issue.record("not a database that cannot be read: \(String(describing: runs))")
            return
        }
        #expect(runs?.description == underlying.description)
        let report = #expect(throws: RunArchiveError.self) { try archive.report(run: 1) }
        #expect(report == runs)
    }
}
