import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// A pool worker's room is measured: with a session analysing, the capacity it reports (in its
/// heartbeat and on `health/`) is what the box's processors fit at its sessions' measured cost,
/// below the ceiling it was given, and at least the sessions it hosts.
@Suite(.serialized, .tags(.process))
struct PoolCapacityIntegrationTests {
    @Test func aPoolWorkerReportsTheRoomItMeasuredNotItsCeiling() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        _ = try await topology.startBroker()
        let coordinator = try topology.start("coordinator", ["coordinator", "--state", state])
        #expect(await coordinator.waitForError(containing: "coordinating on"), "\(coordinator.diagnostics)")
        let worker = try topology.start(
            "w1", ["worker", "--pool", "default", "--name", "w1", "--capacity", "1024", "--state", state])
        #expect(
            await coordinator.waitForError(containing: "worker w1 joined pool default"),
            "\(coordinator.diagnostics)")
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", "sim:squat,seed=4,reps=20", "--state", state])
        defer { ingest.signal(SIGTERM) }
        #expect(await worker.waitForError(containing: "hosting cam0/left"), "\(worker.diagnostics)")
        let health = try await topology.startListener(
            "health", ["health/w1/", "--format", "json", "--count", "5"])
        #expect(await health.waitForExit(timeout: .seconds(60)) == 0, "\(health.diagnostics)")
        let last = health.outputLines.last ?? ""
        let capacity = Self.counter("capacity", in: last)
        #expect(Self.counter("capacityCeiling", in: last) == 1024, "\(last)")
        #expect(capacity.map { (1..<1024).contains($0) } == true, "measured, not the ceiling: \(last)")
    }

    /// The integer counter `name` in a health line's JSON.
    static func counter(_ name: String, in line: String) -> Int? {
        guard let range = line.range(of: "\"\(name)\":") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}
