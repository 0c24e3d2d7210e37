import Foundation
import KinesiaSystem
import KinesiaTestSupport
import KinesiaWeb
import Synchronization
import Testing

struct LiveHubTests {
    @Test func aNewClientGetsEveryKeysNewestTextThenOnlyWhatChanged() throws {
        let hub = LiveHub()
        hub.publish("session cam0/left", text: "a1")
        hub.publish("session cam0/right", text: "b1")
        hub.publish("session cam0/left", text: "a2")
        let first = try #require(hub.changes(after: 0, timeout: .zero))
        #expect(first.texts == ["a2", "b1"])
        hub.publish("session cam0/right", text: "b2")
        let second = try #require(hub.changes(after: first.seen, timeout: .zero))
        #expect(second.texts == ["b2"])
        // Nothing new: the wait ends empty.
        let idle = try #require(hub.changes(after: second.seen, timeout: .milliseconds(20)))
        #expect(idle.texts.isEmpty && idle.seen == second.seen)
    }

    @Test func aSlowClientSkipsTheStatesItHadNoTimeFor() throws {
        let hub = LiveHub()
        for index in 0..<1000 { hub.publish("session cam0/left", text: "v\(index)") }
        let changes = try #require(hub.changes(after: 0, timeout: .zero))
        #expect(changes.texts == ["v999"])
    }

    @Test func closingEndsEveryWait() async {
        let hub = LiveHub()
        let waiting = Task.detached { hub.changes(after: 0, timeout: .seconds(30)) == nil }
        try? await Task.sleep(for: .milliseconds(50))
        hub.close()
        #expect(await waiting.value)
    }

    @Test func aWaitWithNoChangeEndsWhenTheClockGivenReachesTheTimeoutNotBefore() throws {
        let hub = LiveHub()
        hub.publish("session cam0/left", text: "a1")
        let first = try #require(hub.changes(after: 0, timeout: .zero))
        let clock = ReadCountingClock()
        let ended = Mutex<(done: Bool, changes: (texts: [String], seen: UInt64)?)>((false, nil))
        let client = Thread {
            let changes = hub.changes(after: first.seen, timeout: .seconds(15), clock: ElapsedClock(clock))
            ended.withLock { $0 = (true, changes) }
        }
        client.start()
        #expect(clock.waitForReads(2), "the wait has fixed its deadline (its clock's origin, then its start)")
        clock.base.advance(by: .milliseconds(14_999))
        #expect(clock.waitForReads(clock.reads + 2), "read again since the advance")
        #expect(!ended.withLock { $0.done }, "a millisecond before the timeout: still waiting")
        clock.base.advance(by: .milliseconds(1))
        let deadline = Date().addingTimeInterval(10)
        while !ended.withLock({ $0.done }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let changes = try #require(ended.withLock { $0.changes }, "the wait ends at the timeout")
        #expect(changes.texts.isEmpty && changes.seen == first.seen, "with nothing new")
    }
}
