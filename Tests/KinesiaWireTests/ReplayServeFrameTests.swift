import KinesiaWire
import Testing

/// The serve frame a replay server sends the broker's replay port: its bytes, its pages, and
/// what a broker refuses to read.
struct ReplayServeFrameTests {
    static let stream = StreamID(0x0123_4567_89AB_CDEF)

    @Test func aServeFrameRoundTripsAndItsBytesAreDocumented() throws {
        let topic = try Topic.event(camera: "cam0", session: "left")
        let frame = ReplayServeFrame(streams: [.init(topic: topic, stream: Self.stream)])
        let bytes = frame.encoded()
        // KR 01 10, one stream: its id little-endian, the topic's length and bytes.
        #expect(Array(bytes.prefix(6)) == [0x4B, 0x52, 0x01, 0x10, 0x01, 0x00])
        #expect(Array(bytes[6..<14]) == [0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01])
        #expect(bytes[14] == 16)
        #expect(Array(bytes[15...]) == topic.bytes)
        #expect(try ReplayServeFrame.decode(bytes) == frame)
    }

    @Test func manyStreamsGoInPagesOfAtMost128AndNoneIsOneEmptyFrame() throws {
        let streams = try (0..<300).map {
            ReplayServeFrame.Stream(
                topic: try Topic.event(camera: "cam\($0)", session: "s"), stream: StreamID(UInt64($0)))
        }
        let frames = ReplayServeFrame.frames(for: streams)
        #expect(frames.count == 3)
        let decoded = try frames.flatMap { try ReplayServeFrame.decode($0).streams }
        #expect(decoded == streams)
        #expect(frames.allSatisfy { $0.count < 64 * 1024 })
        let empty = ReplayServeFrame.frames(for: [])
        #expect(empty.count == 1)
        #expect(try ReplayServeFrame.decode(empty[0]).streams.isEmpty)
    }

    @Test func aServeFrameThatDoesNotReadIsRefused() throws {
        let topic = try Topic.pose(camera: "cam0")
        let bytes = ReplayServeFrame(streams: [.init(topic: topic, stream: Self.stream)]).encoded()
        #expect(throws: ReplayFrameError.self) { try ReplayServeFrame.decode(Array(bytes.dropLast())) }
        #expect(throws: ReplayFrameError.self) { try ReplayServeFrame.decode(bytes + [0]) }
        var badTopic = bytes
        badTopic[15] = 0xFF
        #expect(throws: ReplayFrameError.self) { try ReplayServeFrame.decode(badTopic) }
        var tooMany = bytes
        tooMany[4] = 0xFF
        tooMany[5] = 0xFF
        #expect(throws: ReplayFrameError.self) { try ReplayServeFrame.decode(tooMany) }
        // A request is not a serve frame, nor is a serve frame a reply.
        let request = ReplayRequest(requestID: 1, topic: topic, stream: nil, from: 0, limit: 1).encoded()
        #expect(throws: ReplayFrameError.self) { try ReplayServeFrame.decode(request) }
        #expect(throws: ReplayFrameError.self) { try ReplayReply.decode([bytes]) }
    }
}
