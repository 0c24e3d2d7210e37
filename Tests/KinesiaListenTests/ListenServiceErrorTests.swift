import KinesiaBus
import KinesiaClient
import KinesiaService
import Testing

@testable import KinesiaListen

/// What a listener that cannot reach its bus tells its user: the typed error of its own target,
/// naming the bus, with libzmq's error underneath.
struct ListenServiceErrorTests {
    @Test func aBusAddressLibzmqRefusesCannotBeReached() throws {
        // libzmq refuses a host name that does not begin with a letter or a digit at connect.
        let bus = try BusAddress(parsing: "tcp://_nohost:5555")
        let service = ListenService(
            configuration: .init(bus: bus, mode: .live(prefixes: ["event/"]), count: 0),
            logger: Logger(label: "kinesia listen", sink: CapturedText()), output: CapturedText())
        let error = #expect(throws: ListenServiceError.self) { try service.run(until: StopToken()) }
        #expect(error == .bus(bus.description, .invalidArgument))
        #expect(
            error?.description == "the bus \(bus) failed: \(ZMQError.invalidArgument)")
        #expect(error?.isUsageError == false, "kinesia listen exits 1, as before")
    }
}
