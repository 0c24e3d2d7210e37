import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// `kinesia ingest --pace recording`: poses leave at the pace of their timestamps (`--speed`
/// times faster), and when the bus cannot take them at that pace the late poses are dropped
/// and counted, never queued without limit: real processes, a real broker, and the test's own
/// subscriber reading the send times the ingest wrote into every header.
@Suite(.timeLimit(.minutes(3)), .tags(.process))
struct IngestPacingTests {
    /// The test's subscriber: every pose (its header and timestamp) and the health reports.
    final class BusReader {
        let context: ZMQContext
        let subscriber: BusSubscriber
        private(set) var poses: [(header: WireHeader, t: Double)] = []
        private(set) var health: [String: HealthReport] = [:]

        init(bus: String, camera: String) throws {
            context = try ZMQContext()
            subscriber = try BusSubscriber(
                context: context, bus: try BusAddress(parsing: bus),
                prefixes: [try .poses(camera: camera), .kind(.health)])
            _ = try subscriber.waitForConnection(timeout: .seconds(60))
        }

        deinit {
            subscriber.close()
            context.terminate()
        }

        /// Messages lost on the way, as the sequence numbers show them.
        var missing: UInt64 { subscriber.tracker.totals.missing }

        /// Reads what is waiting, every 10 ms, until `condition` holds or `timeout` passes
        /// (polling between `await`s: no thread of the test pool is blocked).
        func read(timeout: Duration = .seconds(30), until condition: (BusReader) -> Bool) async -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: timeout)
            while true {
                while let delivery = try? subscriber.tryReceive() {
                    guard case .message(let message, _) = delivery else { continue }
                    switch message.body {
                    case .pose(let pose): poses.append((message.header, pose.timestamp))
                    case .health(let report): health[report.process] = report
                    default: break
                    }
                }
                if condition(self) { return true }
                if clock.now >= deadline { return false }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    static let walk = PackagePaths.path("data/recordings/s2d_demo_walk_mediapipe.jsonl")

    /// The timestamps of the walk recording, from the file itself.
    static func walkTimestamps() throws -> [Double] {
        try JSONLinesRecording.load(contentsOf: URL(fileURLWithPath: walk)).map(\.timestamp)
    }

    @Test(arguments: [1.0, 4.0])
    func paceRecordingSendsAtTheRecordingsPaceTimesTheSpeed(speed: Double) async throws {
        let timestamps = try Self.walkTimestamps()
        let duration = try #require(timestamps.last) - timestamps[0]
        #expect(duration > 6)  // the walk lasts 6.7 s: a pacing error is not lost in noise
        let expected = duration / speed

        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let reader = try BusReader(bus: topology.bus, camera: "walk")
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "walk", "--source", Self.walk, "--pace", "recording", "--speed",
                "\(speed)",
            ])
        #expect(await ingest.waitForExit(timeout: .seconds(90)) == 0, "\(ingest.diagnostics)")
        let all = await reader.read { $0.poses.count >= timestamps.count }
        #expect(all, "\(reader.poses.count) of \(timestamps.count) poses:\n\(topology.diagnostics)")
        try #require(all)
        #expect(reader.poses.map(\.t) == timestamps)

        // The send times the ingest wrote: the whole span, and no pose ahead of its time.
        let sent = reader.poses.map { Double($0.header.sentAt) / 1e9 }
        let span = sent.last! - sent[0]
        #expect(span >= 0.8 * expected, "sent \(timestamps.count) poses in \(span) s, expected \(expected) s")
        // Not paced by anything else: within a few times the expected time (and, at --speed 4,
        // clearly faster than the recording's own pace).
        #expect(
            span <= (speed == 1 ? 3 * expected : 0.8 * duration), "took \(span) s, expected \(expected) s")
        for index in timestamps.indices {
            let due = (timestamps[index] - timestamps[0]) / speed
            #expect(
                sent[index] - sent[0] >= 0.8 * due - 0.05,
                "pose \(index) (t=\(timestamps[index])) left \(sent[index] - sent[0]) s after the first, due at \(due) s"
            )
        }
        let finalLine = ingest.errorText.split(separator: "\n").last.map(String.init) ?? ""
        #expect(finalLine.contains("done: \(timestamps.count) poses sent to the broker in "), "\(finalLine)")
        #expect(finalLine.contains(", 0 dropped"), "\(finalLine)")
    }

    /// The last `N dropped` the ingest logged (progress lines every 5 s, then its final line).
    static func droppedCount(in log: String) -> Int? {
        log.matches(of: /, ([0-9]+) dropped/).last.flatMap { Int($0.1) }
    }

    @Test func liveTimingDropsAndCountsThePosesTheBusCannotTakeInTime() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        let reader = try BusReader(bus: topology.bus, camera: "cam0")
        // A 30 fps recording played 1000 times faster: far more than the bus takes once the
        // broker stops reading.
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", Self.walk, "--loop", "--pace", "recording",
                "--speed", "1000",
            ])
        let flowing = await reader.read { $0.poses.count >= 100 }
        #expect(flowing, "\(topology.diagnostics)")
        try #require(flowing)

        // The broker stops reading: the ingest's queue fills up and it must drop, and say so.
        broker.signal(SIGSTOP)
        let frozen = reader.poses.count
        let dropping = await waitUntil(timeout: .seconds(60)) {
            (Self.droppedCount(in: ingest.errorText) ?? 0) > 0
        }
        broker.signal(SIGCONT)
        #expect(dropping, "no drop reported while the broker was stopped:\n\(ingest.diagnostics)")
        try #require(dropping)

        // The health counter says so on the bus, and the receivers see the gap.
        var reported = 0
        let counted = await reader.read(timeout: .seconds(60)) { reader in
            reported = reader.health["ingest-cam0"]?.counters["dropped"] ?? 0
            return reported > 0
        }
        #expect(counted, "no health report with dropped > 0: \(reader.health)")
        let resumed = reader.poses.count
        let more = await reader.read(timeout: .seconds(60)) { $0.poses.count >= resumed + 1000 }
        #expect(more && resumed > frozen, "the poses did not flow again:\n\(topology.diagnostics)")
        #expect(
            reader.missing >= UInt64(reported),
            "the ingest dropped \(reported) poses, the subscriber saw \(reader.missing) missing")

        ingest.signal(SIGTERM)
        #expect(await ingest.waitForExit(timeout: .seconds(30)) == 0, "\(ingest.diagnostics)")
        let finalLine = ingest.errorText.split(separator: "\n").last.map(String.init) ?? ""
        #expect(finalLine.contains(": stopped: "), "\(finalLine)")
        let finalDropped = Self.droppedCount(in: finalLine) ?? 0
        #expect(finalDropped >= reported && finalDropped > 0, "\(finalLine)")
    }
}
