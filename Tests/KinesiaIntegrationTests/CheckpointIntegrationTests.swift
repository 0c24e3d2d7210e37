import Foundation
import Glibc
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// A journaling worker (the default) checkpoints its sessions as it goes; killed with SIGKILL
/// mid-session and started again, it rebuilds from its last checkpoint, not from the session's
/// first pose, and what a consumer gets from beginning to end is `kinesia analyze`'s events.
@Suite(.tags(.process), .serialized)
struct CheckpointIntegrationTests {
    static let simulation = "sim:squat,seed=3,reps=12"

    @Test func aWorkerKilledMidSessionRebuildsFromItsCheckpoint() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await Self.killAndRebuild(topology, credentials: nil)
    }

    /// The same over TCP with CURVE keys: the restarted worker fetches the poses after its
    /// checkpoint, and the late listener every event, through the broker's replay port.
    @Test func aWorkerKilledMidSessionOverCURVERebuildsThroughTheBrokersReplayPort() async throws {
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        let health = try await Self.killAndRebuild(topology, credentials: keys.credentials(keys.consumer))
        // Poses after the checkpoint came by replay: there is no other way on this bus.
        let worker = await health.wait(for: "worker") { $0.counters["posesReplayed", default: 0] > 0 }
        #expect(worker != nil, "\(topology.diagnostics)")
        let broker = await health.wait(for: "broker") { $0.counters["replay.entries", default: 0] > 0 }
        #expect(broker?.counters["replay.refused.notAllowed"] == 0, "\(topology.diagnostics)")
    }

    /// A state directory whose starts file cannot be written (its folder replaced by a file
    /// once the worker runs): the failure is counted on `health/` and said in the log, and the
    /// live analysis goes on.
    @Test func aStartsFileThatCannotBeWrittenIsCountedAndAnalysisGoesOn() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state-dir"
        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "left=squat:left", "--state", state])
        try FileManager.default.removeItem(atPath: state + "/starts")
        #expect(FileManager.default.createFile(atPath: state + "/starts", contents: Data("x".utf8)))
        _ = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", Self.simulation, "--speed", "4", "--no-journal"])
        let report = await health.wait(for: "worker", timeout: .seconds(60)) {
            $0.counters["startsErrors", default: 0] >= 1 && $0.counters["events", default: 0] >= 3
        }
        #expect(report != nil, "\(topology.diagnostics)")
    }

    /// Kills a journaling worker mid-session, starts it again, and checks that a listener from
    /// the beginning gets `kinesia analyze`'s events; returns the health reports read.
    static func killAndRebuild(_ topology: Topology, credentials: BusCredentials?) async throws -> HealthWatch
    {
        let state = topology.directory + "/state-dir"
        let expected = try await Oracle.events(source: Self.simulation, exercise: "squat", side: "left")
        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus, credentials: credentials)
        let session = ["--camera", "cam0", "--session", "left=squat:left", "--state", state]
        let first = try await topology.startWorker("worker", session)
        // It keeps serving its poses at the end of the simulation: a worker restarted while it
        // runs may still be rebuilding then (on a loaded machine it was: its rebuild lost the
        // poses it had not fetched when the ingest exited, and with them the events).
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", Self.simulation, "--speed", "4", "--state", state,
                "--keep-serving",
            ])
        let checkpointed = await health.wait(for: "worker", timeout: .seconds(60)) {
            $0.counters["checkpoints", default: 0] >= 2 && $0.counters["events", default: 0] >= 3
        }
        #expect(checkpointed != nil, "\(topology.diagnostics)")
        first.signal(SIGKILL)
        _ = await first.waitForExit()
        let analysedBeforeTheKill = checkpointed?.counters["poses"] ?? 0

        let second = try await topology.startWorker("worker", session)
        #expect(second.errorText.contains("restored from a checkpoint"), "\(second.diagnostics)")
        #expect(
            await ingest.waitForError(
                containing: "serving its poses through replay until stopped", timeout: .seconds(90)),
            "\(ingest.diagnostics)")
        let listener = try topology.start(
            "listen",
            [
                "listen", "event/cam0/left/", "--from", "beginning", "--format", "json", "--count",
                String(expected.count),
            ])
        #expect(await listener.waitForExit(timeout: .seconds(30)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] ?? []
        #expect(received == expected, "one stream, every event once, as analyze finds them")
        // Rebuilt from the checkpoint: fewer poses replayed than the first worker had analysed.
        let report = await health.wait(for: "worker", timeout: .seconds(60)) { $0.pid == Int(second.pid) }
        let replayed = report?.counters["posesReplayed"] ?? .max
        #expect(
            replayed < analysedBeforeTheKill,
            "replayed \(replayed), analysed before the kill \(analysedBeforeTheKill)")
        #expect(report?.counters["runsRestarted"] == 0)
        ingest.signal(SIGTERM)
        #expect(await ingest.waitForExit(timeout: .seconds(30)) == 0, "\(ingest.diagnostics)")
        return health
    }
}
