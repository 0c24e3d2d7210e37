import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaWire
import Testing

/// The worker's receive: poses decoded flat come as flat poses, everything else as messages,
/// duplicates skipped, in the order they came.
struct SubscriberFlatPoseTests {
    @Test func posesComeFlatAndEverythingElseAsMessages() async throws {
        let broker = try FakeBroker()
        let context = try ZMQContext()
        let subscriber = try BusSubscriber(
            context: context, bus: broker.bus, prefixes: [.kind(.pose), .kind(.health)])
        subscriber.decodesPosesFlat = true
        defer {
            subscriber.close()
            context.terminate()
        }
        #expect(try await broker.waitUntil { $0.subscriptions.count == 2 })

        let first = try Sent.pose(sequence: 0)
        let second = try Sent.pose(sequence: 1)
        try broker.send(first)
        try broker.send(first)  // a duplicate: skipped
        try broker.send(try Sent.health(sequence: 0))
        try broker.send(second)
        try broker.send([Array("pose/cam0/".utf8), [1, 2, 3]])  // truncated

        var received: [String] = []
        var timestamps: [Double] = []
        // Generous for a loaded CI box (the loop ends as soon as all four came).
        let deadline = ContinuousClock.now + .seconds(60)
        while received.count < 4, ContinuousClock.now < deadline {
            guard let delivery = try subscriber.tryReceive() else {
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            switch delivery {
            case .flatPose(let topic, let header, let pose, let result):
                received.append("pose \(topic) #\(header.sequence) \(result)")
                timestamps.append(pose.timestamp)
            case .message(let message, _): received.append("message \(message.topic)")
            case .malformed(_, let reason): received.append("malformed \(reason.code)")
            }
        }
        #expect(
            received == [
                "pose pose/cam0/ #0 newStream(restart: false, missed: 0)", "message health/worker-cam0/",
                "pose pose/cam0/ #1 inOrder", "malformed truncated",
            ])
        guard case .pose(let sent) = first.body else {
            Issue.record("the fixture is not a pose")
            return
        }
        #expect(timestamps.first == sent.timestamp, "the pose handed over is the one decoded")
        #expect(subscriber.tracker.totals.duplicates == 1)
        #expect(try subscriber.tryReceive() == nil)
    }

    /// The worker's receive: a pose decoded into the caller's own `FlatPose`, whatever
    /// `decodesPosesFlat` says; the rest as deliveries.
    @Test func aPoseIsDecodedIntoTheCallersPose() async throws {
        let broker = try FakeBroker()
        let context = try ZMQContext()
        let subscriber = try BusSubscriber(
            context: context, bus: broker.bus, prefixes: [.kind(.pose), .kind(.health)])
        defer {
            subscriber.close()
            context.terminate()
        }
        #expect(try await broker.waitUntil { $0.subscriptions.count == 2 })

        let first = try Sent.pose(sequence: 0)
        try broker.send(first)
        try broker.send(first)  // a duplicate: skipped
        try broker.send(try Sent.health(sequence: 0))
        try broker.send([Array("pose/cam0/".utf8), [1, 2, 3]])  // truncated

        var pose = FlatPose()
        var received: [String] = []
        var timestamps: [Double] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while received.count < 3, ContinuousClock.now < deadline {
            guard let delivery = try subscriber.tryReceive(flatPoseInto: &pose) else {
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            switch delivery {
            case .pose(let topic, let header, _):
                received.append("pose \(topic) #\(header.sequence)")
                timestamps.append(pose.timestamp)
            case .other(.message(let message, _)): received.append("message \(message.topic)")
            case .other(.malformed(_, let reason)): received.append("malformed \(reason.code)")
            case .other(.flatPose): received.append("a flat pose as a delivery")
            }
        }
        #expect(received == ["pose pose/cam0/ #0", "message health/worker-cam0/", "malformed truncated"])
        guard case .pose(let sent) = first.body else {
            Issue.record("the fixture is not a pose")
            return
        }
        #expect(timestamps == [sent.timestamp], "the pose decoded is the one sent")
        #expect(subscriber.tracker.totals.duplicates == 1)
        #expect(try subscriber.tryReceive(flatPoseInto: &pose) == nil)
    }
}
