import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaCLI

/// `kinesia up` in-process, through the command-line funnel.
@Suite(.tags(.process))
struct UpCommandTests {
    @Test func runsATopologyToItsEndAndPrintsEachAction() async throws {
        let scratch = try ScratchDirectory("up")
        let file = scratch.path("once.json")
        try Data(
            #"{"processes": [{"name": "once", "executable": "/bin/sh", "command": ["-c", "exit 0"], "restart": "never"}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: file))
        let run = await CommandRun.run(["up", file])
        #expect(run.status == 0)
        #expect(run.output == "")
        let lines = run.error.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(lines)")
        #expect(
            lines.first
                == "kinesia up: \(file): 1 processes, bus default (each command's per-user runtime directory)"
        )
        #expect(lines.dropFirst().first?.hasPrefix("kinesia up: started once (pid ") == true)
        #expect(
            lines.suffix(2) == [
                "kinesia up: not restarting once (restart: never)",
                "kinesia up: stopped every process; exit status 0",
            ])
    }

    @Test func anUnreadableFileFailsWithStatusOne() async {
        let run = await CommandRun.run(["up", "/nonexistent/topology.json"])
        #expect(run.status == 1)
        #expect(
            run.error
                == "kinesia up: error: /nonexistent/topology.json: cannot read the file (No such file or directory)\n"
        )
    }

    @Test func withoutAFileItIsAUsageError() async {
        let run = await CommandRun.run(["up"])
        #expect(run.status == 64)
        #expect(run.error.hasPrefix("kinesia up: error: missing argument <file>"))
    }
}
