import Foundation
import KinesiaBus
import Testing

struct MessageTests {
    static let sizes = [0, 1, 29, 30, 255, 256, 8192, 65_536, 1_048_577, 16 * 1_048_576]

    @Test(arguments: sizes)
    func multipartMessagesRoundTripWholeOverIPC(size: Int) throws {
        let directory = try IPCDirectory.makeTemporary()
        defer { directory.remove() }
        let context = try ZMQContext()
        let pull = try ZMQSocket(.pull, context: context)
        defer { pull.close() }
        let push = try ZMQSocket(.push, context: context)
        defer { push.close() }
        let endpoint = try pull.bindRestricted(directory.endpoint("pipe"))
        try push.connect(endpoint)

        let message = [bytes("topic/"), pattern(count: size), [], pattern(count: 3, seed: 1)]
        try push.send(message)
        let received = try #require(try pull.receive(timeout: .seconds(5)))
        #expect(received.count == message.count)
        #expect(received.map(\.count) == message.map(\.count))
        #expect(received == message)
    }

    @Test(arguments: [0, 256, 16 * 1_048_576])
    func messagesRoundTripOverTCP(size: Int) throws {
        let (pull, push) = try connectedSockets(.pull, .push, at: "tcp://127.0.0.1:*")
        let payload = pattern(count: size, seed: 3)
        try push.send([payload])
        #expect(try pull.receive(timeout: .seconds(5)) == [payload])
    }

    @Test func receiveIntoReplacesTheFramesOfTheLastMessage() throws {
        let (pull, push) = try connectedSockets(.pull, .push, at: "inproc://reuse")

        var frames: [[UInt8]] = []
        try push.send([bytes("a much longer first frame"), bytes("second"), bytes("third")])
        try push.send([bytes("short")])
        try push.send([[], bytes("two")])
        try pull.receive(into: &frames)
        #expect(frames == [bytes("a much longer first frame"), bytes("second"), bytes("third")])
        try pull.receive(into: &frames)
        #expect(frames == [bytes("short")])
        #expect(try pull.tryReceive(into: &frames))
        #expect(frames == [[], bytes("two")])
    }

    @Test func messagesOfManyFramesArriveInOrder() throws {
        let (pair, peer) = try connectedSockets(.pair, .pair, at: "inproc://many-frames")
        let message = (0..<100).map { pattern(count: $0, seed: UInt8($0)) }
        try peer.send(message)
        try peer.send([bytes("next")])
        #expect(try pair.receive() == message)
        #expect(try pair.receive() == [bytes("next")])
        #expect(try pair.get(.hasMoreFrames) == false)
    }
}
