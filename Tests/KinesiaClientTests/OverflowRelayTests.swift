import KinesiaMotion
import KinesiaWire
import Testing

@testable import KinesiaClient

/// The buffer between the receiving thread and the consumer: what does not fit is reported,
/// at the place of the hole, as soon as there is room again.
struct OverflowRelayTests {
    private func message(_ sequence: UInt64) throws -> BusMessage {
        .event(
            BusEvent(
                event: .holdStarted, t: Double(sequence), topic: try .event(camera: "cam0", session: "left"),
                header: Sent.header(.event, sequence)))
    }

    @Test func whatTheFullBufferRefusesComesAsOneOverflowGapWhereTheHoleIs() async throws {
        let (stream, continuation) = AsyncStream.makeStream(
            of: BusMessage.self, bufferingPolicy: .bufferingOldest(2))
        var relay = OverflowRelay()
        for sequence in 0..<5 { #expect(relay.send(try message(UInt64(sequence)), to: continuation)) }
        #expect(relay.pendingDrops == 3)

        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == (try message(0)))
        #expect(await iterator.next() == (try message(1)))
        #expect(relay.send(try message(5), to: continuation))
        #expect(relay.pendingDrops == 0)
        #expect(relay.totalDrops == 3)
        #expect(await iterator.next() == .gap(.overflow(dropped: 3)))
        #expect(await iterator.next() == (try message(5)))
    }

    @Test func aMessageThatComesWhileTheReportDoesNotFitIsCountedToo() async throws {
        let (stream, continuation) = AsyncStream.makeStream(
            of: BusMessage.self, bufferingPolicy: .bufferingOldest(1))
        var relay = OverflowRelay()
        _ = relay.send(try message(0), to: continuation)
        _ = relay.send(try message(1), to: continuation)
        _ = relay.send(try message(2), to: continuation)
        #expect(relay.pendingDrops == 2)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == (try message(0)))
        // Room for one: the report goes in, the message does not.
        _ = relay.send(try message(3), to: continuation)
        #expect(await iterator.next() == .gap(.overflow(dropped: 2)))
        #expect(relay.pendingDrops == 1)
        _ = relay.send(try message(4), to: continuation)
        #expect(await iterator.next() == .gap(.overflow(dropped: 1)))
    }

    @Test func anEndedStreamTellsTheReceiverToStop() throws {
        let (_, continuation) = AsyncStream.makeStream(
            of: BusMessage.self, bufferingPolicy: .bufferingOldest(4))
        continuation.finish()
        var relay = OverflowRelay()
        #expect(relay.send(try message(0), to: continuation) == false)
    }
}
