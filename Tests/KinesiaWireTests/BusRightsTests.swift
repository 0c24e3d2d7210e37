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

    /// What each peer may replay through the broker (read back), and serve there.
    @Test(arguments: [
        (BusPeer.role(.ingest), [String](), ["pose/cam0/"]),
        (
            BusPeer.role(.worker), ["pose/cam0/", "event/cam0/left/", "snapshot/cam0/left/"],
            [
                "event/cam0/left/", "snapshot/cam0/left/",
            ]
        ),
        (BusPeer.role(.consumer), ["event/cam0/left/", "snapshot/cam0/left/"], []),
        (BusPeer.role(.control), ["event/cam0/left/", "snapshot/cam0/left/"], []),
        (BusPeer.role(.broker), [], []),
        (
            BusPeer.trusted, ["pose/cam0/", "event/cam0/left/", "snapshot/cam0/left/", "health/worker-1/"],
            [
                "pose/cam0/", "event/cam0/left/", "snapshot/cam0/left/",
            ]
        ),
    ])
    func eachPeerReplaysWhatItsRoleReadsAndServesWhatItPublishes(
        _ peer: BusPeer, _ replays: [String], _ serves: [String]
    ) {
        for topic in Self.topics {
            let kind = Array(topic.utf8).withUnsafeBytes { BusRights.TopicKind(topic: $0) }
            #expect(
                BusRights.mayReplay(peer, kind) == replays.contains(topic),
                "\(peer) replays \(topic.debugDescription)")
            #expect(
                BusRights.mayServe(peer, kind) == serves.contains(topic),
                "\(peer) serves \(topic.debugDescription)")
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
