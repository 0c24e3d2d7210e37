import Foundation
import KinesiaClient
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWire
import Testing

/// What the demo's day waits on before its first patient: the voices heard on a real broker
/// (their `health/` reports come through it once they are connected).
@Suite(.serialized, .tags(.process))
struct HealthCollectorIntegrationTests {
    @Test(.timeLimit(.minutes(2)))
    func aVoiceIsHeardOnceConnectedAndAProcessNeverStartedIsNamedWhenTheTimeIsUp() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let voice = try topology.start(
            "voice",
            [
                "voice", "--camera", "cam0", "--engine", "command", "--output", topology.directory + "/voice",
                "--name", "voice-left",
            ])
        let bus = try BusAddress(parsing: topology.bus)
        let clock = ContinuousClock()
        // A bound against a hang only: the voice reports at its start, then every second.
        let heard = try await Offload.value {
            try HealthCollector.waitForReports(from: ["voice-left"], bus: bus, within: .seconds(60)) { false }
        }
        #expect(heard.isEmpty, "\(voice.diagnostics)")
        let start = clock.now
        let silent = try await Offload.value {
            try HealthCollector.waitForReports(
                from: ["voice-left", "voice-right"], bus: bus, within: .seconds(3)
            ) { false }
        }
        let waited = start.duration(to: clock.now)
        #expect(silent == ["voice-right"])
        #expect(waited >= .seconds(3), "gave up before its limit: \(waited)")
    }
}
