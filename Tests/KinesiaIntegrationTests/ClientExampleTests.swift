import Foundation
import KinesiaClient
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Synchronization
import Testing

// The consumer of the KinesiaClient article (Sources/KinesiaClient/Docs.docc/KinesiaClient.md),
// character for character between the markers; `theArticleShowsTheCodeThisTestRuns` checks it.
// article-example-begin
/// Follows the sessions of camera `camera` and the health of every process until cancelled.
func follow(camera: String, on bus: BusAddress, show: (String) -> Void) async throws {
    let topics = [try TopicPrefix.events(camera: camera), .kind(.health)]
    for try await message in BusMessages(bus: bus, topics: topics) {
        switch message {
        case .event(let e): show("\(e.session) #\(e.sequence) \(MotionJSON.encode(e.event, at: e.t))")
        case .health(let h): show("\(h.process): up \(Int(h.report.uptime)) s")
        case .gap(let gap): show("gap: \(gap)")
        case .malformed(let bad): show("malformed: \(bad)")
        case .snapshot, .analytics, .run, .pose: break
        }
    }
}
// article-example-end

/// The article's consumer against a real broker, worker and ingest: it shows the events that
/// `kinesia analyze` prints for the same poses, in the same order, numbered 0, 1, 2...
@Suite(.serialized, .tags(.process))
struct ClientExampleTests {
    @Test(.timeLimit(.minutes(3)))
    func theArticlesConsumerShowsTheEventsOfAnalyzeInOrder() async throws {
        let source = "sim:squat,seed=3"
        let expected = try await Oracle.events(source: source, exercise: "squat", side: "left")
        #expect(!expected.isEmpty)

        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let bus = try BusAddress(parsing: topology.bus)
        let shown = ShownLines()
        let events = { shown.all.filter { $0.hasPrefix("left #") } }

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await follow(camera: "cam0", on: bus) { shown.append($0) }
            }
            // The broker's own health report came through the broker: the consumer's
            // subscriptions are there, and a worker that connects now receives them.
            let subscribed = await waitUntil(timeout: .seconds(60)) {
                shown.all.contains { $0.hasPrefix("broker: up") }
            }
            #expect(subscribed, "no health report of the broker: \(shown.all)")
            _ = try await topology.startWorker(
                "worker", ["--camera", "cam0", "--session", "left=squat:left"])
            let ingest = try topology.start(
                "ingest", ["ingest", "--camera", "cam0", "--source", source, "--pace", "max"])
            #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
            let complete = await waitUntil(timeout: .seconds(30)) { events().count >= expected.count }
            #expect(complete, "\(events().count) of \(expected.count) events:\n\(topology.diagnostics)")
            group.cancelAll()
        }

        let numbered = expected.enumerated().map { "left #\($0.offset) \($0.element)" }
        #expect(events() == numbered)
        let lines = shown.all
        #expect(!lines.contains { $0.hasPrefix("gap:") || $0.hasPrefix("malformed:") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("worker: up") })
    }

    @Test func theArticleShowsTheCodeThisTestRuns() throws {
        let article = try String(
            contentsOfFile: PackagePaths.path("Sources/KinesiaClient/Docs.docc/KinesiaClient.md"),
            encoding: .utf8)
        let test = try String(contentsOfFile: #filePath, encoding: .utf8)
        let blocks = article.components(separatedBy: "```swift\n").dropFirst()
            .map { $0.components(separatedBy: "\n```")[0] }
        let consumer = try #require(blocks.first { $0.contains("BusMessages(") })
        let imports = consumer.split(separator: "\n").filter { $0.hasPrefix("import ") }
        let code = consumer.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0.hasPrefix("import ") || $0.isEmpty }.joined(separator: "\n")
        let compiled = try #require(
            test.components(separatedBy: "// article-example-begin\n").dropFirst().first?
                .components(separatedBy: "\n// article-example-end").first)
        #expect(code == compiled)
        for line in imports { #expect(test.contains("\n\(line)\n"), "the test lacks \(line)") }
        // At most twenty lines, with the call that starts it.
        let call = try #require(blocks.first { $0.contains("try await follow(") })
        let lineCount = consumer.split(separator: "\n").count + call.split(separator: "\n").count
        #expect(lineCount <= 20)
    }
}

/// What the consumer showed, shared with the task that runs it.
final class ShownLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }
}
