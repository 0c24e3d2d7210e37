import Foundation
import KinesiaClient
import KinesiaTestSupport
import Testing

/// The committed input-to-actions traces of the exactly-once machine: the Swift machine makes
/// exactly the committed actions from the committed inputs, every trace delivers each message
/// once and in order or reports it lost, and the Python port (`kinesia.exactly_once`) replays
/// the same file to the same actions (`clients/python/tests/test_exactly_once_traces.py`, also
/// run here).
///
/// After a deliberate change of the machine's decisions, write the file again with
/// `KINESIA_WRITE_TRACES=1 swift test --filter ExactlyOnceTraceTests` and port the change to
/// Python.
@Suite struct ExactlyOnceTraceTests {
    static let fixture = "Tests/KinesiaClientTests/Fixtures/exactly-once-traces.json"

    static var generated: String {
        "{\"traces\":[\n" + ExactlyOnceTraceScenario.all.map { $0.run().json }.joined(separator: ",\n")
            + "\n]}\n"
    }

    @Test func theSwiftMachineMakesTheCommittedActionsFromTheCommittedInputs() throws {
        let text = Self.generated
        let path = PackagePaths.path(Self.fixture)
        if ProcessInfo.processInfo.environment["KINESIA_WRITE_TRACES"] == "1" {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOfFile: path, encoding: .utf8)
        let generatedLines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let committedLines = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let firstDifference = zip(generatedLines, committedLines).enumerated().first {
            $0.element.0 != $0.element.1
        }?
        .offset
        #expect(
            text == committed,
            "line \((firstDifference ?? min(generatedLines.count, committedLines.count)) + 1) differs")
    }

    @Test(arguments: ExactlyOnceTraceScenario.all.map(\.name))
    func everyTraceDeliversEachMessageOnceInOrderOrReportsItLost(_ name: String) throws {
        let scenario = try #require(ExactlyOnceTraceScenario.all.first { $0.name == name })
        let trace = scenario.run()
        #expect(trace.steps.count > 100)
        var delivered = 0
        for index in 0..<scenario.streams {
            let outcomes = trace.outcomes[index] ?? []
            let first: UInt64 =
                scenario.cursor[index].map { $0 + 1 }
                ?? {
                    switch scenario.start {
                    case .beginning: 0
                    case .sequence(let first): first
                    case .now: outcomes.first?.sequence ?? 0
                    }
                }()
            let expected = Array(first..<trace.published[index])
            if scenario.announces {
                #expect(
                    outcomes.map(\.sequence) == expected, "stream \(index): every sequence once, in order")
            } else {
                // Without announcements the consumer cannot know of a tail it never received
                // (messages dropped, or not held for lack of room): what it says is a prefix.
                #expect(outcomes.count > 10)
                #expect(outcomes.map(\.sequence) == Array(expected.prefix(outcomes.count)), "stream \(index)")
            }
            delivered += outcomes.filter(\.delivered).count
        }
        // What the scenario makes unreachable is the only loss.
        switch name {
        case "retention window", "damaged records", "a stream unknown to the server", "no replay endpoint",
            "server silent for 10 s", "late join from now":
            #expect(delivered > 0)
        default:
            #expect(trace.counters["lost", default: 0] == 0, "\(trace.counters)")
        }
        if name == "slow consumer: batches cut short" {
            // Cut batches asked for again, nothing lost (checked above).
            #expect(trace.counters["cutBatches", default: 0] > 0, "\(trace.counters)")
        }
        if name == "long catch-up" {
            // Several batches in flight: a request made while another is under way.
            let inFlight = trace.steps.contains { step in
                step.actions.filter { if case .request = $0 { true } else { false } }.count > 1
            }
            #expect(inFlight)
        }
    }

    @Test(.tags(.process), .timeLimit(.minutes(3)))
    func thePythonPortMakesTheSameActionsFromTheSameInputs() throws {
        let run = try TestProcess.run(
            try PackagePaths.python(),
            ["-m", "unittest", "-v", PackagePaths.path("clients/python/tests/test_exactly_once_traces.py")],
            environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("Ran 1 test"), "\(run.output)")
    }
}
