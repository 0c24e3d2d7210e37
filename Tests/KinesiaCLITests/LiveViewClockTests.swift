import Foundation
import KinesiaClient
import KinesiaService
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaCLI

/// `kinesia watch --once`'s listening time is on the view's clock: on a manual clock that does
/// not move, the view goes on listening however long the test waits; moved past its time, it
/// prints the view and ends. On the system's clock it would have ended after 2 s.
@Suite struct LiveViewClockTests {
    @Test func theViewListensForItsTimeOnItsClock() async throws {
        try await offCooperativePool {
            let directory = NSTemporaryDirectory() + "kinesia-view-clock-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let bus = try BusAddress(parsing: directory)
            try bus.prepare()
            let clock = ManualClock()
            var configured = LiveView(bus: bus, prefixes: [.kind(.event)], mode: .plain, once: 2)
            configured.startClock = { ElapsedClock(clock) }
            let view = configured
            let output = CapturedText()
            let context = CommandContext(standardOutput: output, standardError: CapturedText())
            let stop = StopToken()
            let finished = DispatchSemaphore(value: 0)
            Thread {
                _ = try? view.run(stop: stop, context: context)
                finished.signal()
            }.start()
            var ended = finished.wait(timeout: .now() + 3) == .success
            #expect(!ended, "2 s of the view's clock have not passed")
            clock.advance(by: .seconds(2))
            if !ended { ended = finished.wait(timeout: .now() + 10) == .success }
            #expect(ended, "its time passed: the view ends")
            #expect(!output.text.isEmpty, "and prints the view once")
            if !ended {
                stop.request()
                finished.wait()
            }
        }
    }
}
