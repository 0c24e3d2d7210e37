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

    @Test func aWaitWithNoChangeEndsWhenTheClockGivenReachesTheTimeoutNotBefore() async throws {
        try await offCooperativePool {
            let hub = LiveHub()
            hub.publish("session cam0/left", text: "a1")
            let first = try #require(hub.changes(after: 0, timeout: .zero))
            let clock = ReadCountingClock()
            let probe = clock.probe(limit: .seconds(15)) {
                hub.changes(after: first.seen, timeout: .seconds(15), clock: ElapsedClock(clock))
            }
            #expect(probe.waitingJustBefore, "a millisecond before the timeout: still waiting")
            let changes = try #require(probe.result ?? nil, "the wait ends at the timeout")
            #expect(changes.texts.isEmpty && changes.seen == first.seen, "with nothing new")
        }
    }
}
