import KinesiaBus
import KinesiaMotion
import KinesiaWire
import Testing

@testable import KinesiaClient

/// ``BusMessages`` over a real socket, against a stand-in broker in this process: values in
/// order, gaps and malformed messages as values, and a consumer that stops frees its socket.
struct BusMessagesTests {
    @Test(.timeLimit(.minutes(3)))
    func messagesGapsAndMalformedFramesComeInOrderAsValues() async throws {
        let broker = try FakeBroker()
        let topic = try Topic.event(camera: "cam0", session: "left")
        let messages = BusMessages(bus: broker.bus, topics: [try .events(camera: "cam0"), .kind(.health)])
        var iterator = messages.makeAsyncIterator()
        #expect(try await broker.waitUntil { $0.subscriptions.count == 2 })
        #expect(Set(broker.subscriptions) == ["event/cam0/", "health/"])

        try broker.send(try Sent.event(.holdStarted, at: 1, sequence: 0))
        try broker.send(try Sent.event(.formFault(.keepTrunkUpright), at: 2, sequence: 3))
        try broker.send([topic.bytes, [0x4B, 0x57, 9]])
        try broker.send([topic.bytes])
        try broker.send(try Sent.event(.holdStarted, at: 0.5, sequence: 0, stream: StreamID(7)))
        try broker.send(try Sent.health(sequence: 0))
        try broker.send(try Sent.pose(sequence: 0))  // not subscribed: never comes

        var values: [BusMessage] = []
        while values.count < 7, let value = try await iterator.next() { values.append(value) }
        #expect(values.count == 7)
        guard values.count == 7 else { return }
        if case .event(let e) = values[0] {
            #expect(e.event == .holdStarted && e.sequence == 0)
        } else {
            Issue.record("\(values[0])")
        }
        #expect(values[1] == .gap(.missed(topic: topic, count: 2, before: 3)))
        if case .event(let e) = values[2] {
            #expect(e.event == .formFault(.keepTrunkUpright) && e.t == 2)
        } else {
            Issue.record("\(values[2])")
        }
        if case .malformed(let m) = values[3] {
            #expect(m.reason.code == "truncated")
        } else {
            Issue.record("\(values[3])")
        }
        if case .malformed(let m) = values[4] {
            #expect(m.reason.code == "frameCount")
        } else {
            Issue.record("\(values[4])")
        }
        #expect(values[5] == .gap(.senderRestarted(topic: topic, stream: StreamID(7))))
        if case .event(let e) = values[6] {
            #expect(e.streamID == StreamID(7))
        } else {
            Issue.record("\(values[6])")
        }
        let health = try await iterator.next()
        if case .health(let h) = health {
            #expect(h.report == Sent.report)
        } else {
            Issue.record("\(String(describing: health))")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func cancellingTheConsumerEndsTheSequenceAndClosesTheSocket() async throws {
        let broker = try FakeBroker()
        let finished = Flag()
        let received = Count()
        let messages = BusMessages(
            bus: broker.bus, topics: [.kind(.event)], bufferLimit: 16,
            receiverFinished: { finished.set() })
        let consumer = Task {
            for try await _ in messages { received.increment() }
            return received.value
        }
        #expect(try await broker.waitUntil { $0.subscriptions == ["event/"] })
        try broker.send(try Sent.event(.holdStarted, at: 1, sequence: 0))
        #expect(try await broker.waitUntil { _ in received.value == 1 })
        #expect(!finished.isSet)

        consumer.cancel()
        #expect(try await consumer.value == 1)
        // The thread closed its socket (the broker sees the subscription go) and ended.
        #expect(try await broker.waitUntil { $0.unsubscriptions == ["event/"] })
        #expect(try await broker.waitUntil { _ in finished.isSet })
    }

    @Test(.timeLimit(.minutes(3)))
    func leavingTheLoopClosesTheSocket() async throws {
        let broker = try FakeBroker()
        let finished = Flag()
        let messages = BusMessages(
            bus: broker.bus, topics: [.kind(.health)], bufferLimit: 16,
            receiverFinished: { finished.set() })
        var iterator: BusMessages.Iterator? = messages.makeAsyncIterator()
        #expect(try await broker.waitUntil { $0.subscriptions == ["health/"] })
        try broker.send(try Sent.health(sequence: 0))
        if case .health = try await iterator?.next() {} else { Issue.record("no health report") }
        iterator = nil
        #expect(try await broker.waitUntil { $0.unsubscriptions == ["health/"] })
        #expect(try await broker.waitUntil { _ in finished.isSet })
    }

    @Test(.timeLimit(.minutes(3)))
    func breakingOutOfAForLoopClosesTheSocket() async throws {
        let broker = try FakeBroker()
        let finished = Flag()
        let messages = BusMessages(
            bus: broker.bus, topics: [.kind(.health)], bufferLimit: 16,
            receiverFinished: { finished.set() })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await message in messages {
                    if case .health = message { break }
                }
            }
            #expect(try await broker.waitUntil { $0.subscriptions == ["health/"] })
            try broker.send(try Sent.health(sequence: 0))
            try await group.waitForAll()
        }
        #expect(try await broker.waitUntil { $0.unsubscriptions == ["health/"] })
        #expect(try await broker.waitUntil { _ in finished.isSet })
    }
}
