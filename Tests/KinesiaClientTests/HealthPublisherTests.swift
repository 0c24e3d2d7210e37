import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaWire
import Synchronization
import Testing

/// A health report too large for the wire goes out summarised, never dropped silently.
struct HealthPublisherTests {
    /// The counters of a worker hosting 8,000 sessions with long names: over 1 MiB of JSON.
    static let workerCounters: [String: Int] = {
        var counters = ["poses": 123_456, "events": 789, "sessions": 8000, "rejected": 8000, "gaps": 0]
        for index in 0..<8000 {
            let camera = "camera-" + String(repeating: "c", count: 50) + "-\(index % 10)"
            let session = "session-" + String(repeating: "s", count: 50) + "-\(index)"
            counters["rejected.\(camera).\(session)"] = 1
        }
        return counters
    }()

    @Test func aWorkerReportOf8000LongSessionNamesGoesOutSummarisedAndSaysSo() throws {
        let full = HealthReport(
            process: "worker-big", role: "worker", pid: 1, uptime: 2, counters: Self.workerCounters)
        #expect(try full.json().count > 1_048_576)

        let directory = NSTemporaryDirectory() + "kinesia-health-\(UUID().uuidString.prefix(8))"
        let bus = try BusAddress(parsing: directory)
        try bus.prepare()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        // The broker's frontend, as far as a publisher can tell: a SUB bound where it connects.
        let receiver = try ZMQSocket(.sub, context: context)
        try receiver.set(.maximumMessageSize, Int64(WireFormat.maximumFrameSize))
        try receiver.subscribe("")
        _ = try receiver.bind(bus.publisherEndpoint)
        let publisher = try BusPublisher(context: context, bus: bus, connectionTimeout: .seconds(5))
        let told = Mutex<[String]>([])
        var health = try HealthPublisher(
            process: "worker-big", role: "worker",
            problems: { message in told.withLock { $0.append(message) } })

        var received: [[UInt8]]?
        var outcomes: [HealthPublisher.Outcome] = []
        for _ in 0..<200 where received == nil {
            outcomes.append(health.publish(counters: Self.workerCounters, via: publisher))
            received = try receiver.receive(timeout: .milliseconds(20))
        }
        let frames = try #require(received)
        let message = try WireMessage.decode(topic: frames[0], payload: frames[1])
        guard case .health(let report) = message.body else {
            Issue.record("not a health report: \(message)")
            return
        }
        #expect(report.process == "worker-big")
        #expect(report.counters["poses"] == 123_456)
        #expect(report.counters["rejected"] == 8000)
        #expect(report.counters[HealthReport.omittedCountersName] == 8000)
        #expect(outcomes.allSatisfy { $0 == .summarised(omitted: 8000) }, "\(outcomes.prefix(3))")
        #expect(health.summarised == outcomes.count && health.failures == 0)
        // Told once, however many reports went out.
        #expect(told.withLock { $0.count } == 1, "\(told.withLock { $0 })")
        #expect(told.withLock { $0.first?.contains("sending a summary") } == true)
        publisher.close()
        receiver.close()
        context.terminate()
    }

    @Test func aReportWhoseTotalsStillDoNotFitKeepsCountersInNameOrder() throws {
        var counters: [String: Int] = [:]
        for index in 0..<8000 { counters["counter-\(String(repeating: "n", count: 100))-\(index)"] = index }
        let report = HealthReport(process: "p", role: "worker", pid: 1, uptime: 1, counters: counters)
        let (summary, omitted) = try report.summarised()
        #expect(try summary.json().count <= HealthReport.maximumJSONSize)
        #expect(omitted > 7000 && omitted < 8000)
        #expect(summary.counters.count - 1 + omitted == 8000)
        #expect(summary.counters[HealthReport.omittedCountersName] == omitted)
    }

    @Test func aSmallReportIsSentAsItIs() throws {
        let report = HealthReport(process: "p", role: "worker", pid: 1, uptime: 1, counters: ["poses": 3])
        let (same, omitted) = try report.summarised()
        #expect(same == report && omitted == 0)
    }
}
