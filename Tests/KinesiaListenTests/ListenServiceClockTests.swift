import Foundation
import KinesiaClient
import KinesiaListen
import KinesiaService
import KinesiaSystem
import KinesiaWire
import Synchronization
import Testing

/// `kinesia listen --idle` on an injected clock: the listener ends when its clock says nothing
/// came for that long, and not before, whatever the wall clock does.
struct ListenServiceClockTests {
    @Test(.timeLimit(.minutes(3)))
    func anIdleListenerEndsWhenItsClockHasRunTheIdleTimeAndNotBefore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-listen-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let log = CapturedText()
        let service = ListenService(
            configuration: .init(
                bus: try BusAddress(parsing: directory),
                mode: .exactlyOnce(topics: [.kind(.event)], start: .beginning, from: "beginning"),
                idle: .seconds(30)),
            logger: Logger(label: "kinesia listen", sink: log), output: CapturedText(), clock: clock)
        let ended = Mutex(false)
        let stop = StopToken()
        let thread = Thread {
            try? service.run(until: stop)
            ended.withLock { $0 = true }
        }
        thread.start()
        defer { stop.request() }
        // Half a second of real time, 29.9 s on the listener's clock: still listening.
        try await Task.sleep(for: .milliseconds(300))
        clock.advance(by: .milliseconds(29_900))
        try await Task.sleep(for: .milliseconds(300))
        #expect(!ended.withLock { $0 }, "ended before its idle time")
        clock.advance(by: .milliseconds(100))
        var waited = 0
        while !ended.withLock({ $0 }), waited < 50 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(ended.withLock { $0 }, "still listening 5 s after its idle time")
        #expect(log.text.contains("nothing for 30 s: exiting"), "\(log.text)")
    }
}
