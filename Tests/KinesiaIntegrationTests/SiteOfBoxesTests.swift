import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// A site of several boxes, each a network namespace, CURVE on every link: the broker and the
/// coordinator on one box, the camera's ingest on another, two pool workers on boxes of their
/// own (each with its own state directory: nothing of one box's journal, checkpoints or session
/// starts is the other's), the consumer on a fifth. Every process of one worker box is killed;
/// its sessions go on in the other box, rebuilt from their first pose as the dead box reported
/// them to the coordinator, with the camera's poses replayed through the broker; a consumer that
/// follows the sessions from the beginning gets exactly the events of `kinesia analyze`.
@Suite(.serialized, .tags(.process))
struct SiteOfBoxesTests {
    static let source = "sim:squat,seed=3,reps=8"

    @Test func aWorkerBoxStoppedHasItsSessionsGoOnInTheOtherBoxExactlyOnce() async throws {
        guard let site = try await HostDeployment.make(security: .curve, extraHosts: ["worker-b"]) else {
            return
        }
        defer { site.tearDown() }
        try await site.makeKey("reception", role: "control")
        let coordinator = try site.start(
            "coordinator", on: "broker", ["coordinator", "--state", site.directory + "/broker-box"],
            flags: ["--key", site.secretKey("broker"), "--allowed", site.keys + "/allowed"])
        #expect(
            await coordinator.waitForError(containing: "coordinating on tcp://"), "\(coordinator.diagnostics)"
        )
        func startWorker(_ name: String, on host: String) async throws -> KinesiaProcess {
            let worker = try site.start(
                name, on: host,
                ["worker", "--pool", "default", "--name", name, "--state", site.directory + "/\(host)-box"],
                key: "worker")
            #expect(
                await coordinator.waitForError(containing: "worker \(name) joined pool default"),
                "\(coordinator.diagnostics)\n\(worker.diagnostics)")
            return worker
        }
        let first = try await startWorker("wa", on: "worker")
        for side in ["left", "right"] {
            let start = try site.start(
                "start-\(side)", on: "consumer",
                ["session", "start", "cam0/\(side)", "--exercise", "squat", "--side", side], key: "reception")
            #expect(await start.waitForExit() == 0, "\(start.diagnostics)\n\(coordinator.diagnostics)")
            #expect(start.outputLines.first?.contains("started on worker wa") == true, "\(start.outputLines)")
        }
        // The other box joins; the camera's two sessions stay together on the first.
        let second = try await startWorker("wb", on: "worker-b")
        var expected: [String: [String]] = [:]
        for (run, side) in [(UInt64(1), "left"), (2, "right")] {
            expected["event/cam0/\(side)/"] = Oracle.inRun(
                try await Oracle.events(source: Self.source, exercise: "squat", side: side), run)
        }
        let total = expected.values.map(\.count).reduce(0, +)
        let listener = try site.start(
            "listen", on: "consumer",
            ["listen", "event/cam0/", "--from", "beginning", "--format", "json", "--count", String(total)],
            key: "ward")
        #expect(await listener.waitForError(containing: "listening to"), "\(listener.diagnostics)")
        let ingest = try site.start(
            "ingest", on: "ingest",
            [
                "ingest", "--camera", "cam0", "--source", Self.source, "--speed", "1", "--keep-serving",
                "--state",
                site.directory + "/camera-box",
            ], key: "cam0")
        defer { ingest.signal(SIGTERM) }
        #expect(await first.waitForError(containing: "hosting cam0/left"), "\(first.diagnostics)")
        try await Task.sleep(for: .seconds(4))
        #expect(listener.outputLines.count > 0, "events flowed before the box stopped: \(site.diagnostics)")

        // The first worker box stops: every process in it is killed.
        let killed = site.network.processes(on: "worker")
        #expect(!killed.isEmpty)
        for pid in killed { kill(pid, SIGKILL) }
        for side in ["left", "right"] {
            #expect(
                await coordinator.waitForError(
                    containing: "cam0/\(side) (run \(side == "left" ? 1 : 2)) goes to worker wb",
                    timeout: .seconds(60)),
                "\(coordinator.diagnostics)")
        }
        #expect(
            await second.waitForError(containing: "the run goes on from another worker on stream"),
            "\(second.diagnostics)")
        #expect(second.errorText.contains("rebuilt from its first pose"), "\(second.diagnostics)")
        #expect(await listener.waitForExit(timeout: .seconds(90)) == 0, "\(site.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)
        #expect(received == expected, "every event once, in order, across the stopped box")
        // The other box had the camera's poses again through the broker's replay port (the
        // boxes share no socket and no directory).
        #expect(
            await waitUntil(timeout: .seconds(60)) { (site.brokerCounter("replay.entries") ?? 0) > 0 },
            "\(site.diagnostics)")
    }
}
