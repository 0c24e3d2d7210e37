import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaIngest
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWire
import Testing

/// A pool session tells the coordinator each hole it gives up and waits, boundedly, until the
/// coordinator has it. A user's own publisher that leaves holes on purpose, while the
/// coordinator does not answer (paused here, its leases long enough to outlast the pause),
/// must not hold the session back a bound per hole: it analyses what arrives live.
@Suite(.serialized, .tags(.process))
struct PoolSessionHoleTests {
    @Test(.timeLimit(.minutes(3)))
    func holesGivenUpWhileTheCoordinatorIsAwayDoNotHoldThePoolSessionBack() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let (coordinator, worker) = try await ControlPlaneIntegrationTests.startSite(
            topology, state: state, lease: 60)
        defer { coordinator.signal(SIGCONT) }
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        #expect(await worker.waitForError(containing: "hosting cam0/left"), "\(worker.diagnostics)")
        let health = try HealthWatch(bus: topology.bus)

        let poses = try PoseSource.load("sim:squat,seed=3,reps=6")
        // One sequence number in 10 never sent: a hole given up every 10 poses, about 60 in
        // all, each a resume to tell (waited 250 ms each, one after the other, they held the
        // session back 10 s at one in 15).
        let skipped = Set(poses.indices.filter { $0 % 10 == 9 })
        let sent = poses.count - skipped.count
        let publisher = try HoleyPosePublisher(bus: topology.bus, camera: "cam0")
        // The session knows within 2 s that no server announces this stream (it then waits for
        // none of its holes), and the coordinator is away from now on.
        try await Task.sleep(for: .milliseconds(2500))
        coordinator.signal(SIGSTOP)
        let paused = ContinuousClock.now
        try await publisher.publish(poses, skipping: skipped, restingEvery: 5)  // about 500 poses/s
        let lastSent = ContinuousClock.now
        // The session's progress as its health reports told it, once a second: where a slow
        // session spent its time (the worker's log has no times).
        var timeline: [String] = []
        let report = await health.wait(for: "w1-cam0.left", timeout: .seconds(60)) { report in
            let counters = report.counters
            let seconds = String(format: "%.1f", paused.duration(to: .now).seconds)
            timeline.append(
                "\(seconds) s: \(counters["poses"] ?? 0) poses, \(counters["holesSkipped"] ?? 0) holes, "
                    + "\(counters["replayRequests"] ?? 0) requests")
            return counters["poses"] == sent
        }
        let caughtUp = lastSent.duration(to: .now)
        let counters = health.latest["w1-cam0.left"]?.counters ?? [:]
        #expect(
            report != nil,
            """
            every pose sent is analysed (\(counters["poses"] ?? 0) of \(sent)), sent by \
            \(paused.duration(to: lastSent)) after the pause; its reports since the pause: \
            \(timeline.joined(separator: "; ")); \(worker.diagnostics)
            """)
        // Its health report comes once a second: live, the session is done within about that.
        #expect(caughtUp < .seconds(8), "analysed \(caughtUp) after the last pose was sent")
        #expect(counters["holesSkipped"] == skipped.count, "\(counters)")
        #expect(counters["resumesNotKept", default: 0] >= 1, "the session went on without the coordinator")
        #expect(worker.isRunning)
    }
}
