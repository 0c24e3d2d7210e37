import Foundation
import KinesiaBus
import KinesiaWire
import Testing

/// The broker's forwarder with epoch fencing, on real sockets: a message whose epoch is below
/// one forwarded before on its stream is dropped and counted; the others reach subscribers as
/// `[topic, payload]`, and messages of another shape go on unchanged.
struct ZMQForwarderEpochTests {
    /// A payload with a header of `stream` (kind event) and `sequence`, and `{}`.
    static func payload(stream: UInt64, sequence: UInt64) -> [UInt8] {
        WireHeader(kind: .event, streamID: StreamID(stream), sequence: sequence, sentAt: 0).bytes
            + Array("{}".utf8)
    }

    @Test func aStaleEpochIsDroppedAndCountedAndTheOthersArriveWithoutTheirEpochFrame() throws {
        let site = try ForwarderSite(fencesEpochs: true)
        defer { site.close() }
        let (forwarder, publisher, subscriber) = (site.forwarder, site.publisher, site.subscriber)

        let topic = bytes("event/cam0/left/")
        let warmUp = [topic, Self.payload(stream: 9, sequence: 0)]
        #expect(try publishUntilReceived(warmUp, publisher: publisher, subscriber: subscriber) == warmUp)
        while try subscriber.receive(timeout: .milliseconds(50)) != nil {}

        let newer = Self.payload(stream: 1, sequence: 1)
        let other = Self.payload(stream: 2, sequence: 0)
        let again = Self.payload(stream: 1, sequence: 3)
        let notAnEpoch = bytes("not an epoch")
        let sent: [[[UInt8]]] = [
            [topic, newer, EpochFrame.encode(5)],
            [topic, Self.payload(stream: 1, sequence: 2), EpochFrame.encode(4)],  // a fenced holder's
            [topic, other, EpochFrame.encode(1)],  // another stream: its own epochs
            [topic, again, EpochFrame.encode(5)],
            [topic, again, notAnEpoch],
            [topic, again, EpochFrame.encode(1), notAnEpoch],
            [topic, again],
        ]
        for message in sent { try publisher.send(message) }
        var received: [[[UInt8]]] = []
        while received.count < 6, let message = try subscriber.receive(timeout: .seconds(5)) {
            received.append(message)
        }
        #expect(
            received == [
                [topic, newer], [topic, other], [topic, again], [topic, again, notAnEpoch],
                [topic, again, EpochFrame.encode(1), notAnEpoch], [topic, again],
            ])
        #expect(try subscriber.receive(timeout: .milliseconds(200)) == nil)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(5))
        while forwarder.statistics().delivered < 7, clock.now < deadline { usleep(10_000) }
        let statistics = forwarder.statistics()
        #expect(statistics.staleEpochs == 1)
        #expect(statistics.epochsForwarded == 3)
        #expect(statistics.published == statistics.delivered + 1)
    }

    @Test func withoutFencingAnEpochFrameIsForwardedLikeAnyFrame() throws {
        let site = try ForwarderSite(fencesEpochs: false)
        defer { site.close() }
        let (publisher, subscriber) = (site.publisher, site.subscriber)
        let message = [bytes("event/cam0/left/"), Self.payload(stream: 1, sequence: 0), EpochFrame.encode(3)]
        #expect(try publishUntilReceived(message, publisher: publisher, subscriber: subscriber) == message)
    }
}

/// A forwarder between an XSUB and an XPUB on inproc endpoints of their own, a PUB connected to
/// its front and a SUB (every topic) to its back.
private struct ForwarderSite {
    let context: ZMQContext
    let forwarder: ZMQForwarder
    let publisher: ZMQSocket
    let subscriber: ZMQSocket

    init(fencesEpochs: Bool) throws {
        context = try ZMQContext()
        let name = UUID().uuidString
        let frontend = try ZMQSocket(.xsub, context: context)
        let backend = try ZMQSocket(.xpub, context: context)
        _ = try frontend.bind("inproc://front-\(name)")
        _ = try backend.bind("inproc://back-\(name)")
        forwarder = try ZMQForwarder(frontend: frontend, backend: backend, fencesEpochs: fencesEpochs)
        publisher = try ZMQSocket(.pub, context: context)
        subscriber = try ZMQSocket(.sub, context: context)
        try subscriber.subscribe("")
        try publisher.connect("inproc://front-\(name)")
        try subscriber.connect("inproc://back-\(name)")
    }

    /// Closes the sockets, stops the forwarder, ends the context.
    func close() {
        publisher.close()
        subscriber.close()
        forwarder.stop()
        context.terminate()
    }
}
