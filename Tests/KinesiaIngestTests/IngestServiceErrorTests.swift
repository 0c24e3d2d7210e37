import Foundation
import KinesiaClient
import KinesiaPublishJournal
import KinesiaService
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaIngest

/// What an ingest that cannot start tells its user: the typed error of its own target, with the
/// state directory's error underneath and the message `kinesia ingest` prints.
struct IngestServiceErrorTests {
    /// An ingest of `sim:squat` on a bus directory of `scratch` (no broker: nothing is sent),
    /// journaling in `state`.
    static func ingest(state: String, scratch: ScratchDirectory) throws -> IngestService {
        let bus = try BusAddress(parsing: scratch.path("bus"))
        try bus.prepare()
        var journal = JournalOptions()
        journal.state = state
        let configuration = IngestService.Configuration(
            process: BusProcessIdentity(bus: bus, name: "ingest0"), topic: try Topic.pose(camera: "cam0"),
            waitSeconds: 0, source: "sim:squat", journal: journal, environment: [:])
        return IngestService(
            configuration, source: try PoseSource.open("sim:squat", loop: false),
            log: Logger(label: "ingest", sink: CapturedText()))
    }

    @Test func aRelativeStateDirectoryIsTheUsersMistakeWithTheJournalsMessage() throws {
        let scratch = try ScratchDirectory("ingest-error")
        let service = try Self.ingest(state: "relative/state", scratch: scratch)
        let error = #expect(throws: IngestServiceError.self) { try service.run(until: StopToken()) }
        #expect(error == .journal(.relativeStateDirectory("relative/state")))
        #expect(error?.isUsageError == true, "kinesia ingest exits 64, as before")
        #expect(
            error?.description == PublishJournalError.relativeStateDirectory("relative/state").description)
    }

    @Test func aStateDirectoryThatIsAFileCannotBeUsed() throws {
        let scratch = try ScratchDirectory("ingest-error")
        #expect(FileManager.default.createFile(atPath: scratch.path("state"), contents: Data()))
        let service = try Self.ingest(state: scratch.path("state"), scratch: scratch)
        let error = #expect(throws: IngestServiceError.self) { try service.run(until: StopToken()) }
        guard case .journal(.unusable(let text)) = error else {
            Issue.record("not an unusable state directory: \(String(describing: error))")
            return
        }
        #expect(text.hasPrefix("state directory: "), "\(text)")
        #expect(error?.description == text)
        #expect(error?.isUsageError == false)
    }
}
