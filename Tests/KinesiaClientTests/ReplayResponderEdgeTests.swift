import KinesiaClient
import KinesiaWire
import Testing

/// Replay at the edges of UInt64: no arithmetic trap for any sequence number a peer can send
/// or a stream can reach (issue 19: every computation on data from the bus must be total).
struct ReplayResponderEdgeTests {
    static let topic = try! Topic.event(camera: "cam0", session: "left")

    @Test(arguments: [UInt64.max, UInt64.max - 1, UInt64(1) << 63, (UInt64(1) << 63) - 1])
    func aStreamAtTheEdgeIsServedWithoutATrap(first: UInt64) throws {
        let source = InMemoryReplaySource()
        var sequence = first
        while true {
            source.append(
                topic: Self.topic, stream: StreamID(7), sequence: sequence, frames: [Self.topic.bytes, [1]])
            if sequence == .max || sequence == first &+ 1 { break }
            sequence += 1
        }
        for from in [first, UInt64.max, 1 << 63, 0] {
            for limit: UInt32 in [1, 256, .max] {
                let request = ReplayRequest(
                    requestID: 1, topic: Self.topic, stream: StreamID(7), from: from, limit: limit)
                let (replies, _) = ReplayResponder.answer(request.encoded(), from: source)
                switch replies.last {
                case .end(let end):
                    #expect(end.next >= end.first)
                    #expect(end.next <= (end.last == .max ? .max : end.last + 1))
                case .error(let failure):
                    // Only a sequence older than the stream's first is refused.
                    #expect(failure.code == .notRetained && from < first, "from \(from): \(failure)")
                default:
                    Issue.record("from \(from), limit \(limit): neither an end nor an error: \(replies)")
                }
            }
        }
    }

    @Test func theLastEntryAtUInt64MaxEndsTheBatchAtUInt64Max() throws {
        let source = InMemoryReplaySource()
        source.append(
            topic: Self.topic, stream: StreamID(7), sequence: .max, frames: [Self.topic.bytes, [1]])
        let request = ReplayRequest(
            requestID: 1, topic: Self.topic, stream: StreamID(7), from: .max, limit: 256)
        let (replies, outcome) = ReplayResponder.answer(request.encoded(), from: source)
        #expect(outcome == "served")
        #expect(replies.count == 2)
        guard case .end(let end) = replies.last else {
            Issue.record("no end")
            return
        }
        #expect(end.next == .max)
        #expect(end.count == 1)
    }
}
