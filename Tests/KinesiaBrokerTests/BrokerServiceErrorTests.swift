import Foundation
import KinesiaClient
import KinesiaService
import Testing

@testable import KinesiaBroker

/// What a broker that cannot serve its bus tells its user: the typed error of its own target,
/// naming the directory.
struct BrokerServiceErrorTests {
    @Test func aBusDirectoryThatIsAFileCannotBeServed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-broker-error-\(UUID().uuidString.prefix(8))"
        ).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let service = BrokerService(
            BrokerService.Configuration(
                bus: try BusAddress(parsing: path), security: .localUser, highWaterMark: 1000),
            log: Logger(label: "broker", sink: CapturedText()))
        let error = #expect(throws: BrokerError.self) { try service.run(until: StopToken()) }
        guard case .unservable(let text) = error else {
            Issue.record("not a bus that cannot be served: \(String(describing: error))")
            return
        }
        #expect(text.contains(path), "\(text)")
        #expect(error?.description == text)
        #expect(error?.isUsageError == false, "kinesia broker exits 1, as before")
    }
}
