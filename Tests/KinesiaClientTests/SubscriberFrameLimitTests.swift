import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaWire
import Testing

/// A subscriber never stores a frame larger than any valid message: it drops the connection
/// that carries one. (Kinesia's broker refuses such frames at its frontend, so only a broker
/// that is not Kinesia's can send one; libzmq 4.3.4 does not reconnect after this protocol
/// error.)
struct SubscriberFrameLimitTests {
    @Test func anOversizedFrameIsNeverStoredOrDelivered() async throws {
        let broker = try FakeBroker()
        let context = try ZMQContext()
        let subscriber = try BusSubscriber(context: context, bus: broker.bus, prefixes: [.kind(.event)])
        defer {
            subscriber.close()
            context.terminate()
        }
        #expect(try await broker.waitUntil { $0.subscriptions.count == 1 })
        #expect(try subscriber.socket.get(.maximumMessageSize) == Int64(WireFormat.maximumFrameSize))

        let topic = try Topic.event(camera: "cam0", session: "left")
        let header = WireHeader(kind: .event, streamID: StreamID(9), sequence: 0, sentAt: 0)
        try broker.send([topic.bytes, header.bytes + [UInt8](repeating: 0x20, count: 4_000_000)])
        // The subscriber dropped the connection: the broker sees its subscription go (or, when
        // the subscriber's libzmq connected again before the drop reached the broker, a second
        // subscription, which keeps the topic subscribed: a fresh-clone CI run on a loaded box).
        #expect(
            try await broker.waitUntil { $0.unsubscriptions == ["event/"] || $0.subscriptions.count > 1 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(try subscriber.tryReceive() == nil)
        #expect(subscriber.received == 0 && subscriber.decodeErrorCount == 0)
    }
}
