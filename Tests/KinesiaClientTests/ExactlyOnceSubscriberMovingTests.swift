import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWire
import Testing

/// ``ExactlyOnceSubscriber`` and a stream said to be moving, over real sockets on a manual
/// clock: a consumer saw #5 of a pool session live and never a heartbeat of its worker, whose
/// pool worker then says the stream is moving (its lease lapsed). The hole is held past the 5 s
/// a publisher without replay gets, and filled once the taker announces the stream.
struct ExactlyOnceSubscriberMovingTests {
    /// Reads what the subscriber delivers and reports lost, while sending heartbeats.
    final class Reader {
        let site: ManualClockSubscriberSite
        var lost: [Range<UInt64>] = []
        var delivered: [[UInt8]] = []
        private var heartbeat = WireEncoder(streamID: StreamID(42))
        private var payload: [UInt8] = []

        init(_ site: ManualClockSubscriberSite) { self.site = site }

        func send(_ report: HealthReport) throws {
            let topic = try Topic.health(process: report.process)
            try heartbeat.encode(json: try report.json(), on: topic, into: &payload)
            try site.broker.send([topic.bytes, payload])
        }

        /// About `wall` of wall time, `each` first at every turn.
        func read(for wall: Duration, _ each: () throws -> Void = {}) throws {
            let end = ContinuousClock.now.advanced(by: wall)
            while ContinuousClock.now < end {
                try each()
                while let delivery = try site.subscriber.receive(timeout: .milliseconds(20)) {
                    switch delivery {
                    case .message(let message): delivered.append(try message.encode().1)
                    case .lost(_, let sequences): lost.append(sequences)
                    case .health, .malformed: break
                    }
                }
            }
        }

        /// #5 live, then (when `said`) the word that its stream moves; then 20 s on the
        /// subscriber's clock.
        func holeOfFive(said: Bool) async throws {
            try await offCooperativePool {
                try site.broker.send(site.published[5])
                try read(for: .milliseconds(300))
                if said {
                    try send(
                        HealthReport(
                            process: "pool-a", role: "pool-worker", pid: 1, uptime: 1, counters: [:],
                            moving: [MovingStream(topic: site.topic, stream: Sent.stream)]))
                    try read(for: .milliseconds(300))
                }
            }
            for _ in 0..<10 {
                site.clock.advance(by: .seconds(2))
                try await offCooperativePool { try read(for: .milliseconds(50)) }
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aHoleInAStreamAPoolWorkerSaysIsMovingIsFilledByTheTaker() async throws {
        let site = try await ManualClockSubscriberSite(camera: "cam7")
        defer { site.close() }
        let reader = Reader(site)
        try await reader.holeOfFive(said: true)
        #expect(reader.lost.isEmpty, "held past the 5 s of a publisher without replay")
        #expect(reader.delivered.isEmpty)

        // The taker announces the stream: the hole is asked of it and filled, nothing lost.
        let server = try ReplayServer(endpoint: "ipc://\(site.broker.directory)/taker.sock")
        defer { server.close() }
        let taker = HealthReport(
            process: "pool-b-cam7.left", role: "worker", pid: 2, uptime: 1, counters: [:],
            replay: ReplayAnnouncement(endpoint: server.endpoint, streams: site.source.streams()))
        try await offCooperativePool {
            try reader.read(for: .seconds(2)) {
                try reader.send(taker)
                try server.serve(from: site.source)
            }
        }
        #expect(reader.lost.isEmpty)
        #expect(reader.delivered == site.published.map { $0[1] })
    }

    /// The same hole without the word: lost after the announcement's 5 s (what the word
    /// changes, checked on the same sockets).
    @Test(.timeLimit(.minutes(3)))
    func withoutTheWordTheHoleIsLostAfterFiveSeconds() async throws {
        let site = try await ManualClockSubscriberSite(camera: "cam7")
        defer { site.close() }
        let reader = Reader(site)
        try await reader.holeOfFive(said: false)
        #expect(reader.lost == [0..<5])
        #expect(reader.delivered == [site.published[5][1]])
    }
}
