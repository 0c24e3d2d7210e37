import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWire
import Testing

/// ``ExactlyOnceSubscriber``'s replay timeouts on a manual clock, over real sockets: a server
/// that never answers holds a hole for as long as the subscriber's clock says, whatever the
/// wall clock does, and is given up (the hole reported lost, what follows delivered) only once
/// the clock has passed its retries.
struct ExactlyOnceSubscriberClockTests {
    @Test(.timeLimit(.minutes(3)))
    func aServerThatNeverAnswersIsGivenUpOnTheSubscribersClock() async throws {
        let site = try await ManualClockSubscriberSite()
        defer { site.close() }
        let (broker, source, published, clock, subscriber) = (
            site.broker, site.source, site.published, site.clock, site.subscriber
        )
        var payload: [UInt8] = []
        // A replay endpoint that takes every request and answers none.
        let silent = try ZMQSocket(.router, context: site.context, linger: .zero)
        defer { silent.close() }
        let endpoint = try silent.bind("ipc://\(broker.directory)/silent.sock")

        let health = try Topic.health(process: "worker")
        let report = HealthReport(
            process: "worker", role: "worker", pid: 1, uptime: 1, counters: [:],
            replay: ReplayAnnouncement(endpoint: endpoint, streams: source.streams()))
        var heartbeat = WireEncoder(streamID: StreamID(42))
        var requests = 0
        var lost: [Range<UInt64>] = []
        var delivered: [[UInt8]] = []
        /// About `seconds` of wall time: heartbeats, the last message live, the requests read.
        func run(for seconds: Duration) throws {
            let wall = ContinuousClock()
            let end = wall.now.advanced(by: seconds)
            while wall.now < end {
                try heartbeat.encode(json: try report.json(), on: health, into: &payload)
                try broker.send([health.bytes, payload])
                try broker.send(published[5])
                while try silent.tryReceive() != nil { requests += 1 }
                while let delivery = try subscriber.receive(timeout: .milliseconds(20)) {
                    switch delivery {
                    case .message(let message): delivered.append(try message.encode().1)
                    case .lost(_, let sequences): lost.append(sequences)
                    case .health, .malformed: break
                    }
                }
            }
        }

        // Longer than the request timeout (3 s) on the wall clock, nothing on the subscriber's.
        try await offCooperativePool { try run(for: .milliseconds(3500)) }
        #expect(requests == 1, "the hole 0..<5 is asked for once, and not again")
        #expect(lost.isEmpty && delivered.isEmpty)
        var advances = 0
        while lost.isEmpty, advances < 20 {
            clock.advance(by: .seconds(3))
            advances += 1
            try await offCooperativePool { try run(for: .milliseconds(200)) }
        }
        #expect(lost == [0..<5], "given up once its clock passed the retries")
        #expect(advances >= 3, "not before three unanswered requests")
        #expect(delivered == [published[5][1]], "what followed the hole is delivered, once")
    }
}
