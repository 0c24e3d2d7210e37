import KinesiaBus
import KinesiaClient
import Testing

/// Which replay connections are kept, from monitor events with virtual time (issue 19, item 8:
/// every connection cost the server libzmq's pipes and buffers, and nothing capped them).
struct ReplayConnectionsTests {
    static func accepted(_ descriptor: UInt32) -> SocketEvent {
        SocketEvent(kind: .accepted, value: descriptor)
    }
    static func left(_ descriptor: UInt32) -> SocketEvent {
        SocketEvent(kind: .disconnected, value: descriptor)
    }

    @Test func connectionsBeyondTheCapAreRefusedAndCountedAndThoseOpenBeforeAreKept() {
        var connections = ReplayConnections(maximumConnections: 2)
        let actions = connections.record(
            [Self.accepted(10), Self.accepted(11), Self.accepted(12)], now: .zero)
        #expect(actions == [.refuse(descriptor: 12)])
        #expect(connections.open == 2)
        #expect(connections.refused == 1)
        // The refused one closes, a served one leaves: the next is served.
        let next = connections.record([Self.left(12), Self.left(10), Self.accepted(13)], now: .seconds(1))
        #expect(next.isEmpty)
        #expect(connections.open == 2)
        #expect(connections.accepted == 4)
    }

    @Test func aRefusedConnectionThatAlreadyLeftIsNotShutDown() {
        // Its descriptor may already belong to another file: only the ones still open are.
        var connections = ReplayConnections(maximumConnections: 1)
        let actions = connections.record([Self.accepted(10), Self.accepted(11), Self.left(11)], now: .zero)
        #expect(actions.isEmpty)
        #expect(connections.refused == 1)
    }

    @Test func thousandsOfConnectionsNeverOpenMoreThanTheCap() {
        var connections = ReplayConnections(maximumConnections: 256)
        let actions = connections.record((0..<9000).map { Self.accepted(UInt32(100 + $0)) }, now: .zero)
        #expect(connections.open == 256)
        #expect(actions.count == 9000 - 256)
        #expect(connections.refused == 9000 - 256)
    }

    @Test func theFreedHeapIsGivenBackOnceManyLeftAndTheyStopped() {
        var connections = ReplayConnections(
            maximumConnections: 1000, trimAfterDepartures: 64, trimQuietPeriod: .seconds(1),
            trimInterval: .seconds(30))
        _ = connections.record((0..<100).map { Self.accepted(UInt32($0)) }, now: .zero)
        let few = connections.record((0..<63).map { Self.left(UInt32($0)) }, now: .seconds(1))
        #expect(few.isEmpty)
        #expect(connections.tick(now: .seconds(10)).isEmpty, "63 left: not enough")
        #expect(connections.record([Self.left(63)], now: .seconds(11)).isEmpty)
        #expect(connections.tick(now: .milliseconds(11_500)).isEmpty, "still leaving")
        #expect(connections.tick(now: .seconds(12)) == [.returnFreedMemory])
        #expect(connections.tick(now: .seconds(20)).isEmpty, "once")
        #expect(connections.memoryReturns == 1)
    }

    @Test func connectionsThatNeverStopLeavingStillGetTheHeapBack() {
        var connections = ReplayConnections(
            maximumConnections: 1, trimAfterDepartures: 64, trimQuietPeriod: .seconds(1),
            trimInterval: .seconds(2))
        var returns = 0
        // A refused client reconnecting every 100 ms, for 10 s.
        for tenth in 0..<100 {
            let descriptor = UInt32(10 + tenth % 2)
            let now = Duration.milliseconds(100 * tenth)
            returns += connections.record([Self.accepted(descriptor), Self.left(descriptor)], now: now).count
        }
        #expect(returns >= 1)
        #expect(connections.memoryReturns == returns)
    }
}
