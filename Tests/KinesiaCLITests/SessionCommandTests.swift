import Foundation
import Testing

/// `kinesia session` when nothing answers: a clear error within the timeout asked for.
struct SessionCommandTests {
    @Test(.timeLimit(.minutes(3)))
    func noCoordinatorIsAnErrorThatSaysWhereItAskedAndHowLong() async throws {
        let bus = NSTemporaryDirectory() + "kinesia-session-options-\(UUID().uuidString)"
        try FileManager.default.createDirectory(
            atPath: bus, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: bus) }
        let clock = ContinuousClock()
        let began = clock.now
        let run = await CommandRun.run(["session", "list", "--bus", bus, "--timeout", "1.5"])
        let took = clock.now - began
        #expect(run.status == 1, "\(run)")
        #expect(
            run.error.contains(
                "no answer from the coordinator at ipc://\(bus)/control.sock within 1.5 seconds"),
            "\(run.error)")
        #expect(took >= .milliseconds(1500), "it waited the timeout: \(took)")
    }
}
