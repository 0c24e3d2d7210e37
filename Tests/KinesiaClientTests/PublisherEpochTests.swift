import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaWire
import Testing

/// A publisher given an epoch (a pool worker's session) sends it after the payload of every
/// event, snapshot and run record, and only there; what it journals stays `[topic, payload]`.
struct PublisherEpochTests {
    @Test func eventsSnapshotsAndRunsCarryTheEpochFramePosesAndHealthDoNotAndTheJournalSeesTwoFrames()
        throws
    {
        let directory = NSTemporaryDirectory() + "kinesia-epoch-\(UUID().uuidString.prefix(8))"
        let bus = try BusAddress(parsing: directory)
        try bus.prepare()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        defer { context.terminate() }
        // The broker's side, without a broker: an XSUB that takes everything.
        let receiver = try ZMQSocket(.xsub, context: context)
        defer { receiver.close() }
        _ = try receiver.bind(bus.publisherEndpoint)
        try receiver.send([[1]])
        let publisher = try BusPublisher(context: context, bus: bus, connectionTimeout: .seconds(5))
        defer { publisher.close() }
        var journaled: [[[UInt8]]] = []
        publisher.beforeSend = { _, _, frames in journaled.append(frames) }
        let health = try Topic.health(process: "worker-1")
        let report = HealthReport(process: "worker-1", role: "worker", pid: 1, uptime: 1, counters: [:])
        // Until the subscription has reached the publisher (slow joiner).
        var joined = false
        for _ in 0..<200 where !joined {
            try publisher.publish(report, on: health)
            joined = try receiver.receive(timeout: .milliseconds(10)) != nil
        }
        #expect(joined)
        while try receiver.receive(timeout: .milliseconds(50)) != nil {}
        journaled.removeAll()

        publisher.epoch = 7
        let event = try Topic.event(camera: "cam0", session: "left")
        let snapshot = try Topic.snapshot(camera: "cam0", session: "left")
        let run = try Topic.session(camera: "cam0", session: "left")
        try publisher.publish(json: #"{"type":"holdStarted","t":1.5}"#, kind: .event, on: event)
        try publisher.publish(json: #"{"type":"snapshot"}"#, kind: .snapshot, on: snapshot)
        try publisher.publish(json: #"{"type":"runStarted"}"#, kind: .session, on: run)
        try publisher.publish(report, on: health)
        try publisher.publish(Sent.pose, on: try Topic.pose(camera: "cam0"))
        publisher.epoch = nil
        try publisher.publish(json: #"{"type":"holdStarted","t":2.5}"#, kind: .event, on: event)

        var received: [[[UInt8]]] = []
        while received.count < 6, let message = try receiver.receive(timeout: .seconds(5)) {
            received.append(message)
        }
        #expect(received.map(\.count) == [3, 3, 3, 2, 2, 2])
        #expect(received.prefix(3).allSatisfy { EpochFrame.decode($0[2]) == 7 })
        #expect(journaled.map(\.count) == [2, 2, 2, 2, 2, 2])
        #expect(
            received.map { Array($0.prefix(2)) } == journaled, "the same topic and payload, byte for byte")
    }
}
