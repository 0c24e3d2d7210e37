import Foundation
import KinesiaClient
import KinesiaService
import KinesiaSystem
import KinesiaTestSupport
import Testing

@testable import KinesiaCoordinator

/// What a coordinator that cannot run tells its user: the typed error of its own target, with
/// the error underneath and the message `kinesia coordinator` printed before.
struct CoordinatorErrorTests {
    static func coordinator(bus: BusAddress, state: String) -> CoordinatorService {
        CoordinatorService(
            CoordinatorService.Configuration(
                process: BusProcessIdentity(bus: bus, name: "coordinator"), stateDirectory: state),
            log: Logger(label: "coordinator", sink: CapturedText()))
    }

    @Test func aStateDirectoryThatIsAFileCannotBeUsed() throws {
        let scratch = try ScratchDirectory("coordinator-error")
        #expect(FileManager.default.createFile(atPath: scratch.path("state"), contents: Data()))
        let service = Self.coordinator(
            bus: try BusAddress(parsing: scratch.path("bus")), state: scratch.path("state"))
        let error = #expect(throws: CoordinatorError.self) { try service.run(until: StopToken()) }
        guard case .stateDirectory(let underlying) = error else {
            Issue.record("not a state directory that cannot be used: \(String(describing: error))")
            return
        }
        #expect(error?.description == "state directory: \(underlying)")
        #expect(error?.isUsageError == false, "kinesia coordinator exits 1, as before")
    }

    @Test func aTCPBusWithoutKeysIsRefusedWithTheSameMessage() throws {
        let scratch = try ScratchDirectory("coordinator-error")
        let bus = try BusAddress(parsing: "tcp://127.0.0.1:5555")
        let service = Self.coordinator(bus: bus, state: scratch.path("state"))
        let error = #expect(throws: CoordinatorError.self) { try service.run(until: StopToken()) }
        #expect(error == .insecureTCP(bus.description))
        #expect(
            error?.description
                == "a coordinator on the TCP bus tcp://127.0.0.1:5555 needs the broker's key and allowed keys (or --insecure)"
        )
    }
}
