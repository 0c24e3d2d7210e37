import Foundation
import Glibc
import KinesiaJSON
import KinesiaMotion
import KinesiaTestSupport
import Testing

/// `kinesia up deploy/local.json` as shipped, on this machine (no sound card, no serial
/// device): a copy of the file whose bus, database, voice directory and wristband path are in
/// the test's directory. Every process keeps running (nothing restarts in a loop), and
/// `kinesia status` lists the consumers with their health: the record storing, the voice
/// speaking (to files when there is no sound output), the haptic wristband (a pseudo-terminal
/// plugged in after the start) playing.
@Suite(.serialized, .tags(.process))
struct DeployIntegrationTests {
    @Test(.timeLimit(.minutes(4)))
    func theOneBoxTopologyRunsItsConsumersAndStatusListsThemWithTheirHealth() async throws {
        let directory = try ConsumerTestPaths.temporaryDirectory().path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bus = directory + "/bus"
        let database = directory + "/record.db"
        let voice = directory + "/voice"
        let wristband = directory + "/wristband"

        var text = try String(contentsOf: PackagePaths.url("deploy/local.json"), encoding: .utf8)
        for (shipped, here) in [
            ("\"kinesia-local.db\"", "\"\(database)\""), ("\"kinesia-local-voice\"", "\"\(voice)\""),
            ("\"/dev/ttyACM0\"", "\"\(wristband)\""),
        ] {
            #expect(text.contains(shipped), "deploy/local.json no longer has \(shipped)")
            text = text.replacingOccurrences(of: shipped, with: here)
        }
        #expect(text.hasPrefix("{\n"))
        text = "{\n  \"bus\": \"\(bus)\",\n" + text.dropFirst(2)
        let file = directory + "/local.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))

        let up = try KinesiaProcess("up", ["up", file], directory: directory)
        defer {
            if up.isRunning {
                up.signal(SIGKILL)
                _ = up.process.waitForExit()
            }
        }
        // The wristband is plugged in once haptic waits for it.
        #expect(
            await up.waitForError(containing: "no device at \(wristband); waiting for the device"),
            "\(up.diagnostics)")
        let terminal = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: wristband, withDestinationPath: terminal.path)
        var received = ""
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(90)
        while clock.now < deadline, !received.contains("PULSE ") {
            let read = try terminal.readAvailable(timeout: .milliseconds(200))
            received += read
            if read.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(received.hasPrefix("HELLO kinesia-haptic 1\n"), "\(received)\n\(up.diagnostics)")
        #expect(received.contains("PULSE "), "\(up.diagnostics)")

        // Every consumer is listed with the counters of what it did.
        let rows = try await StatusRow.poll(bus: bus, timeout: .seconds(60)) { rows in
            (rows["record"]?.counters["stored"] ?? 0) > 0 && (rows["voice"]?.counters["spoken"] ?? 0) > 0
                && (rows["haptic"]?.counters["played"] ?? 0) > 0
        }
        // The sessions were started through the control plane: the pool worker runs each in a
        // service of its own, with its own report.
        #expect(
            Set(rows.keys) == [
                "broker", "coordinator", "worker", "worker-cam0.left", "worker-cam0.right",
                "worker-cam0.analytics",
                "ingest", "record", "voice", "haptic",
            ], "\(rows)")
        let record = try #require(rows["record"])
        #expect(record.role == "record" && (record.counters["stored"] ?? 0) > 0, "\(record)")
        let spoken = try #require(rows["voice"])
        #expect(spoken.role == "voice", "\(spoken)")
        #expect((spoken.counters["events"] ?? 0) > 0 && (spoken.counters["spoken"] ?? 0) > 0, "\(spoken)")
        #expect(spoken.counters["speechErrors"] == 0 && spoken.counters["malformed"] == 0, "\(spoken)")
        let haptic = try #require(rows["haptic"])
        #expect(haptic.role == "haptic", "\(haptic)")
        #expect(haptic.counters["deviceReady"] == 1 && haptic.counters["deviceMissing"] == 0, "\(haptic)")
        #expect((haptic.counters["played"] ?? 0) > 0 && haptic.counters["deviceErrors"] == 0, "\(haptic)")

        // On a machine without sound output the voice writes its utterances where the file says.
        if spoken.counters["noSoundOutput"] == 1 {
            let lines = TestProcess.readFile(voice + "/utterances.jsonl").split(separator: "\n")
            #expect(!lines.isEmpty)
            for line in lines {
                guard case .object(let object) = try JSONParser.parse(String(line)),
                    case .string(let wav) = object["file"], case .string(let said) = object["text"]
                else {
                    Issue.record("not an utterance: \(line)")
                    continue
                }
                #expect(!said.isEmpty)
                #expect(FileManager.default.fileExists(atPath: voice + "/" + wav))
            }
        }

        // No process exited before the shutdown (nothing restarts in a loop) but the three
        // session starts, each done (status 0; asked again while the pool's worker was joining),
        // and it is clean.
        let lines = up.errorText.split(separator: "\n")
        let exits = lines.filter {
            $0.contains("kinesia up: exited") || $0.contains("kinesia up: restarting")
        }
        #expect(exits.allSatisfy { $0.contains(" start-") }, "\(up.diagnostics)")
        for session in ["left", "right", "analytics"] {
            #expect(
                lines.contains { $0.contains("exited start-\(session) (") && $0.contains("status 0)") },
                "\(up.diagnostics)")
        }
        up.signal(SIGTERM)
        #expect(await up.waitForExit(timeout: .seconds(60)) == 0, "\(up.diagnostics)")
        let reportDatabase = try await ConsumerTestPaths.run(
            ["report", "--db", database, "--camera", "cam0", "--out", directory + "/report.html"])
        #expect(reportDatabase.status == 0, "\(reportDatabase.error)")
    }
}
