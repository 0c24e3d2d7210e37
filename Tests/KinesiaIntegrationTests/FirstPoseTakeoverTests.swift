import Foundation
import Glibc
import KinesiaTestSupport
import Testing

/// A run started before its camera publishes begins at the camera's first pose, whichever
/// worker ends up hosting it: `w1` is given `cam0/left` while no ingest publishes `cam0`, and
/// is paused (SIGSTOP) before the camera starts; the camera's ingest starts at once, and `w2`
/// (joined after the placement) takes the session over a lease later, its first live pose well
/// into the camera's stream. It begins the run at the stream's first pose, replayed from the
/// ingest's journal: a consumer following the session from the beginning gets exactly the
/// events `kinesia analyze` finds in the whole source (the long chaos run with pools once got
/// those of a run begun 2.5 s of poses late).
@Suite(.serialized, .tags(.process))
struct FirstPoseTakeoverTests {
    @Test func aRunStartedBeforeItsCameraBeginsAtTheCamerasFirstPoseOnTheWorkerThatTakesItOver()
        async throws
    {
        let topology = try Topology()
        defer { topology.tearDown() }
        let source = "sim:squat,seed=2,reps=6"
        let state = topology.directory + "/state"
        let (coordinator, first) = try await ControlPlaneIntegrationTests.startSite(topology, state: state)
        defer { first.signal(SIGKILL) }
        try await ControlPlaneIntegrationTests.startLeftOnW1(topology)
        #expect(await first.waitForError(containing: "hosting cam0/left"), "\(first.diagnostics)")
        let second = try topology.start(
            "w2", ["worker", "--pool", "default", "--name", "w2", "--capacity", "1", "--state", state])
        #expect(
            await coordinator.waitForError(containing: "worker w2 joined pool default"),
            "\(coordinator.diagnostics)")
        let (expected, listener) = try await ControlPlaneIntegrationTests.listenToRunOne(
            topology, source: source)
        // Paused before it analysed (or told the coordinator) any pose of its run.
        first.signal(SIGSTOP)
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", source, "--speed", "2", "--keep-serving",
                "--state", state,
            ])
        defer { ingest.signal(SIGTERM) }
        #expect(
            await coordinator.waitForError(
                containing: "cam0/left (run 1) goes to worker w2", timeout: .seconds(60)),
            "\(coordinator.diagnostics)")
        #expect(
            await second.waitForError(
                containing: "it begins at the first pose of the camera's stream", timeout: .seconds(60)),
            "\(second.diagnostics)")
        #expect(await listener.waitForExit(timeout: .seconds(90)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)["event/cam0/left/"] ?? []
        #expect(received == expected, "the run's events from the camera's first pose, each once")
        #expect(
            !second.errorText.contains("not to be replayed"),
            "\(second.diagnostics)")
    }
}
