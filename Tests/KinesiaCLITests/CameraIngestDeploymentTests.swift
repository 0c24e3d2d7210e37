import Foundation
import KinesiaSupervisor
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaCLI

/// The camera ingest as it is deployed and shown: the webcam topology and `status`'s columns.
struct CameraIngestDeploymentTests {
    @Test func theWebcamExampleTopologyLoads() throws {
        let topology = try Topology.load(
            contentsOf: PackagePaths.url("deploy/camera.json"))
        let ingest = try #require(topology.processes.first { $0.role == .ingest })
        #expect(
            ingest.command.starts(with: ["ingest", "--camera", "cam0", "--source", "camera:/dev/video0"]))
        #expect(topology.processes.map(\.role) == [.broker, .worker, .consumer, .ingest])
    }

    @Test func theStatusTableShowsACameraIngestsFrameRateAndDrops() {
        let lines = StatusTable.render([
            HealthReport(
                process: "ingest-cam0", role: "ingest", pid: 4260, uptime: 11,
                counters: ["sent": 300, "fpsOut": 9, "framesDropped": 620, "fpsIn": 30, "detectorMs": 101]),
            HealthReport(process: "worker", role: "worker", pid: 4250, uptime: 11, counters: ["poses": 300]),
        ])
        let header = lines[0].split(separator: " ").map(String.init)
        #expect(header.contains("fpsOut") && header.contains("framesDropped"))
        #expect(lines[1].contains("detectorMs 101") && lines[1].contains("fpsIn 30"))
    }
}
