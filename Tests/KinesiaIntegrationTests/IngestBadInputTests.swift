import Foundation
import KinesiaTestSupport
import Testing

/// `kinesia ingest` on input that is not a sound recording (issue 9, items 7, 8, 9): nothing
/// usable, a jump of the recording's time at `--pace recording`, an over-long line on standard
/// input. No broker is needed: the ingest sends into the bus whether or not anyone listens
/// (`--wait-seconds 0`).
@Suite(.tags(.process))
struct IngestBadInputTests {
    private static func write(_ text: String, in topology: Topology, as name: String) throws -> String {
        let path = topology.directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(arguments: ["garbage\n{\"t\": 1}\n\n[1,2]\n", ""])
    func standardInputWithoutAUsablePoseFails(_ input: String) async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let path = try Self.write(input, in: topology, as: "stdin.jsonl")
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", "-", "--wait-seconds", "0"],
            standardInput: path)
        #expect(await ingest.waitForExit() == 1, "\(ingest.diagnostics)")
        let expected =
            input.isEmpty
            ? "error: nothing sent: standard input held no usable pose\n"
            : "error: nothing sent: standard input held no usable pose (3 malformed lines)\n"
        #expect(ingest.errorText.hasSuffix(expected), "\(ingest.diagnostics)")
    }

    @Test func anEmptyRecordingFails() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let path = try Self.write("", in: topology, as: "empty.jsonl")
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", path, "--wait-seconds", "0"])
        #expect(await ingest.waitForExit() == 1, "\(ingest.diagnostics)")
        #expect(
            ingest.errorText.contains("nothing sent: \(path) held no usable pose"), "\(ingest.diagnostics)")
    }

    /// t goes 0 -> 10^6: a wait of 11.6 days, said and skipped; the rest is paced as usual.
    @Test func aJumpInTheRecordingsTimeIsSaidAndNotWaitedFor() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let times = [0, 0.1, 0.2, 1e6, 1e6 + 0.1, 1e6 + 0.2, 5, 5.1]
        let lines = times.map { "{\"t\":\($0),\"points\":{}}" }
        let path = try Self.write(lines.joined(separator: "\n") + "\n", in: topology, as: "jump.jsonl")
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", path, "--pace", "recording", "--wait-seconds", "0"])
        // Waiting through the jump would take 11.6 days; without it, well under a second.
        let status = await ingest.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(ingest.diagnostics)")
        let errors = ingest.errorText
        #expect(
            errors.contains(
                "the recording's time jumps from t=0.2 to t=1000000.0: a wait of 11.6 days (over 5 s) skipped"
            ),
            "\(ingest.diagnostics)")
        #expect(
            errors.contains("the recording's time goes back from t=1000000.2 to t=5.0: sent at once"),
            "\(ingest.diagnostics)")
        #expect(errors.contains("done: 8 poses sent"), "\(ingest.diagnostics)")
        #expect(errors.contains("2 jumps in time not waited for"), "\(ingest.diagnostics)")
    }

    /// A 3 MiB line is one malformed line; the errors after it name their own lines.
    @Test func anOverlongLineOfStandardInputIsOneMalformedLine() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let pose = "{\"t\":0,\"points\":{}}"
        let long = "{\"t\":1,\"x\":\"" + String(repeating: "x", count: 3 << 20) + "\"}"
        let input = [pose, long, "oops", "{\"t\":2,\"points\":{}}"].joined(separator: "\n") + "\n"
        let path = try Self.write(input, in: topology, as: "long.jsonl")
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", "-", "--wait-seconds", "0"],
            standardInput: path)
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        let warnings = ingest.errorText.split(separator: "\n").filter { $0.contains("standard input line") }
        #expect(warnings.count == 2, "\(ingest.diagnostics)")
        #expect(
            warnings.first
                == "kinesia ingest: warning: standard input line 2: the line is longer than 1 MiB: skipped up to its end"
        )
        #expect(warnings.last?.contains("standard input line 3: column 1: invalid JSON") == true)
        #expect(ingest.errorText.contains("done: 2 poses sent"), "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("2 malformed lines"), "\(ingest.diagnostics)")
    }
}
