import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaPublishJournal
import KinesiaService
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaIngest

/// An ingest paces a recording on the clock it is given: on a manual clock that does not move,
/// the first pose goes out and the next waits, however long the test waits; moved by the poses'
/// step, the next goes out. On the system's clock it would have gone 100 ms after the first.
@Suite struct IngestServiceClockTests {
    @Test func aRecordingIsPacedOnTheIngestsClock() async throws {
        try await offCooperativePool {
            let directory = NSTemporaryDirectory() + "kinesia-ingest-clock-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let bus = try BusAddress(parsing: directory)
            try bus.prepare()
            let context = try ZMQContext()
            // The broker's publisher side: an XSUB that subscribes to the camera's poses.
            let broker = try ZMQSocket(.xsub, context: context, linger: .zero)
            _ = try broker.bind(bus.publisherEndpoint)
            try broker.send([[1] + Array("pose/cam0/".utf8)])

            var journal = JournalOptions()
            journal.disabled = true
            let configuration = IngestService.Configuration(
                process: BusProcessIdentity(bus: bus, name: "ingest0"), topic: try Topic.pose(camera: "cam0"),
                pace: .recording, waitSeconds: 20, source: "sim:squat,fps=10", journal: journal,
                environment: [:])
            let clock = ManualClock()
            let service = IngestService(
                configuration, source: try PoseSource.open("sim:squat,fps=10", loop: false),
                log: Logger(label: "ingest", sink: CapturedText()), clock: clock)
            let stop = StopToken()
            let finished = DispatchSemaphore(value: 0)
            Thread {
                try? service.run(until: stop)
                finished.signal()
            }.start()
            defer {
                stop.request()
                finished.wait()
                broker.close()
                context.terminate()
            }

            func poses(within timeout: Duration) throws -> Int {
                let deadline = ContinuousClock.now + timeout
                var received = 0
                while ContinuousClock.now < deadline {
                    while let frames = try broker.tryReceive() {
                        if frames.first == Array("pose/cam0/".utf8) { received += 1 }
                    }
                    Thread.sleep(forTimeInterval: 0.005)
                }
                return received
            }
            #expect(try poses(within: .seconds(3)) == 1, "the first pose goes out at once")
            #expect(try poses(within: .milliseconds(400)) == 0, "the next waits for the ingest's clock")
            clock.advance(by: .milliseconds(100))
            #expect(try poses(within: .seconds(2)) == 1, "moved by one step: the next pose")
        }
    }
}
