import KinesiaWire
import Testing

struct BusRightsTests {
    static let topics = [
        "pose/cam0/", "event/cam0/left/", "snapshot/cam0/left/", "health/worker-1/", "replay/cam0/", "",
        "pos",
    ]

    /// What each peer may publish, topic by topic (the table of the issue).
    @Test(arguments: [
        (BusPeer.role(.ingest), ["pose/cam0/", "health/worker-1/"]),
        (BusPeer.role(.worker), ["event/cam0/left/", "snapshot/cam0/left/", "health/worker-1/"]),
        (BusPeer.role(.consumer), ["health/worker-1/"]),
        (BusPeer.role(.control), ["health/worker-1/"]),
        (BusPeer.role(.broker), ["health/worker-1/"]),
        (BusPeer.trusted, topics),
    ])
    func eachPeerPublishesOnlyItsTopics(_ peer: BusPeer, _ allowed: [String]) {
        for topic in Self.topics {
            let verdict = BusRights.verdict(for: peer, topic: Array(topic.utf8))
            #expect((verdict == .forward) == allowed.contains(topic), "\(peer) on \(topic.debugDescription)")
        }
    }

    @Test func aDroppedMessageSaysWhichKindOfTopicItClaimed() {
        #expect(
            BusRights.verdict(for: .role(.consumer), topic: Array("event/cam0/left/".utf8)) == .drop(.event))
        #expect(BusRights.verdict(for: .role(.worker), topic: Array("pose/cam0/".utf8)) == .drop(.pose))
        #expect(BusRights.verdict(for: .role(.ingest), topic: Array("poses/cam0/".utf8)) == .drop(.unknown))
    }

    @Test func rolesReadTheirNamesAndNothingElse() {
        #expect(BusRole.allCases.map { BusRole(rawValue: $0.rawValue) } == BusRole.allCases)
        #expect(BusRole(rawValue: "Worker") == nil && BusRole(rawValue: "admin") == nil)
        #expect(BusRole.ingest.withArticle == "an ingest" && BusRole.worker.withArticle == "a worker")
    }
}
