import KinesiaTestSupport
import Testing

/// The Python client's replay side (`kinesia.replay`, `kinesia.exactly_once`): the committed vectors read and written as Swift
/// does, and its exactly-once state machine against a simulated lossy bus and replay server.
@Suite(.tags(.process))
struct PythonReplayTests {
    @Test(.timeLimit(.minutes(3)))
    func pythonReadsAndWritesEveryReplayVectorAsSwiftDoes() throws {
        let vectors = PackagePaths.path("Tests/KinesiaWireTests/Fixtures/replay.json")
        let run = try Python.run(Python.fixtures, ["check-replay", vectors])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output == "16 replay vectors ok\n")
    }

    @Test(.timeLimit(.minutes(3)))
    func pythonsExactlyOnceMachineDeliversEveryMessageOnceInOrderOverALossyBus() throws {
        let run = try Python.run([PackagePaths.path("Tests/KinesiaWireTests/Python/replay_driver.py")], [])
        #expect(run.status == 0, "\(run.output)\(run.error)")
        #expect(run.output.hasSuffix("\nok\n"), "\(run.output)")
        #expect(!run.output.contains("FAIL"), "\(run.output)")
    }
}
