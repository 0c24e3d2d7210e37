import KinesiaClient
import Testing

/// Which replay clients are answered, with virtual time (issue 19, item 8: nothing capped
/// replay clients, each one's batch held in the server).
struct ReplayAdmissionTests {
    @Test func atMostTheLimitOfPeersAreAnsweredAndTheRestRefusedAndCounted() {
        var admission = ReplayAdmission(maximumClients: 2, idleTimeout: .seconds(30))
        let admitted1 = admission.admit([1], now: .zero)
        #expect(admitted1)
        let result101 = admission.admit([2], now: .seconds(1))
        #expect(result101)
        let result102 = admission.admit([3], now: .seconds(2))
        #expect(!result102)
        let result103 = admission.admit([1], now: .seconds(3))
        #expect(result103, "a known peer is always answered")
        #expect(admission.refused == 1)
        #expect(admission.clients == 2)
    }

    @Test func anIdlePeerIsForgottenAndItsPlaceGoesToANewOne() {
        var admission = ReplayAdmission(maximumClients: 2, idleTimeout: .seconds(30))
        _ = admission.admit([1], now: .zero)
        _ = admission.admit([2], now: .seconds(20))
        let result104 = admission.admit([3], now: .seconds(29))
        #expect(!result104)
        let result105 = admission.admit([3], now: .seconds(30))
        #expect(result105, "peer 1 idle for 30 s")
        #expect(admission.forgotten == 1)
        let result106 = admission.expire(now: .seconds(60))
        #expect(result106 == 2)
        #expect(admission.clients == 0)
    }

    @Test func thousandsOfClientsNeverGrowTheTableBeyondItsLimit() {
        var admission = ReplayAdmission(maximumClients: 256, idleTimeout: .seconds(30))
        var answered = 0
        for peer in 0..<9000 where admission.admit(Array("peer\(peer)".utf8), now: .milliseconds(peer)) {
            answered += 1
        }
        #expect(answered == 256)
        #expect(admission.clients == 256)
        #expect(admission.refused == 9000 - 256)
    }
}
