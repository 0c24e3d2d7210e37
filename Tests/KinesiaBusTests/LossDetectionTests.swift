import Foundation
import KinesiaBus
import KinesiaMotion
import KinesiaWire
import Testing

/// The bus and the wire format together: what a receiver learns about messages that a real
/// PUB socket dropped, and what byte-prefix subscriptions deliver.
struct LossDetectionTests {
    /// A pose message of `camera` with sequence number `sequence` from `stream`.
    func poseMessage(camera: String, stream: StreamID, sequence: UInt64) throws -> [[UInt8]] {
        let pose = Pose(points: [.neck: CGPoint(x: 10, y: 20)], timestamp: Double(sequence) / 60)
        let message = WireMessage(
            topic: try Topic.pose(camera: camera),
            header: WireHeader(kind: .pose, streamID: stream, sequence: sequence, sentAt: 0),
            body: .pose(pose))
        let encoded = try message.encode()
        return [encoded.topic, encoded.payload]
    }

    @Test func aFloodPastTheHighWaterMarkIsCountedExactlyByTheTracker() throws {
        let context = try ZMQContext()
        let directory = try IPCDirectory.makeTemporary()
        defer { directory.remove() }
        let endpoint = try directory.endpoint("flood.sock")

        let publisher = try ZMQSocket(.pub, context: context)
        try publisher.set(.sendHighWaterMark, 50)
        _ = try publisher.bind(endpoint)
        let subscriber = try ZMQSocket(.sub, context: context)
        try subscriber.set(.receiveHighWaterMark, 50)
        try subscriber.subscribe("pose/")
        try subscriber.connect(endpoint)

        // Slow joiner: probe on another camera until the subscription is in place.
        let stream = StreamID.random()
        let probe = try poseMessage(camera: "probe", stream: stream, sequence: 0)
        #expect(try publishUntilReceived(probe, publisher: publisher, subscriber: subscriber) != nil)
        while try subscriber.tryReceive() != nil {}

        // Flood without reading: PUB drops silently once both high-water marks are full.
        let flood: UInt64 = 20_000
        for sequence in 0..<flood {
            _ = try publisher.trySend(try poseMessage(camera: "cam0", stream: stream, sequence: sequence))
        }
        // One last message after the receiver has drained, so a drop at the very end shows too.
        var tracker = SequenceTracker<Topic>(countsMissingStart: true)
        var received = Set<UInt64>()
        var gapsReported: UInt64 = 0
        func drain(until: Duration) throws {
            while let frames = try subscriber.receive(timeout: until) {
                let message = try WireMessage.decode(topic: frames[0], payload: frames[1])
                guard message.topic == (try Topic.pose(camera: "cam0")) else { continue }
                received.insert(message.header.sequence)
                switch tracker.record(message.header, on: message.topic) {
                case .gap(let missed): gapsReported += missed
                case .newStream(_, let missed): gapsReported += missed
                default: break
                }
            }
        }
        try drain(until: .milliseconds(300))
        try publisher.send(try poseMessage(camera: "cam0", stream: stream, sequence: flood))
        try drain(until: .milliseconds(500))

        let neverArrived = UInt64((0...flood).filter { !received.contains($0) }.count)
        let totals = tracker.totals(for: try Topic.pose(camera: "cam0"))
        #expect(received.contains(flood))
        #expect(neverArrived > 0, "the flood should overflow a high-water mark of 50")
        #expect(totals.missing == neverArrived)
        #expect(gapsReported == neverArrived)
        #expect(totals.delivered == UInt64(received.count))
        #expect(totals.duplicates == 0)
    }

    @Test func aSubscriptionToCam1NeverDeliversCam10() throws {
        let context = try ZMQContext()
        let directory = try IPCDirectory.makeTemporary()
        defer { directory.remove() }
        let endpoint = try directory.endpoint("cameras.sock")

        let publisher = try ZMQSocket(.pub, context: context)
        _ = try publisher.bind(endpoint)
        let subscriber = try ZMQSocket(.sub, context: context)
        try subscriber.subscribe(try TopicPrefix.poses(camera: "cam1").bytes)
        try subscriber.connect(endpoint)

        let stream = StreamID.random()
        let first = try poseMessage(camera: "cam1", stream: stream, sequence: 0)
        #expect(try publishUntilReceived(first, publisher: publisher, subscriber: subscriber) != nil)
        while try subscriber.tryReceive() != nil {}

        for sequence in 1...100 as ClosedRange<UInt64> {
            try publisher.send(try poseMessage(camera: "cam10", stream: stream, sequence: sequence))
            try publisher.send(try poseMessage(camera: "cam1", stream: stream, sequence: sequence))
        }
        var topics: [String] = []
        while let frames = try subscriber.receive(timeout: .milliseconds(300)) {
            topics.append(String(decoding: frames[0], as: UTF8.self))
        }
        #expect(topics.count == 100)
        #expect(Set(topics) == ["pose/cam1/"])
    }
}
