import KinesiaWire
import Testing

struct TopicTests {
    @Test func buildsEveryKindOfTopicEndingWithASlash() throws {
        #expect(try Topic.pose(camera: "cam0").string == "pose/cam0/")
        #expect(try Topic.event(camera: "cam0", session: "left").string == "event/cam0/left/")
        #expect(try Topic.snapshot(camera: "cam-2", session: "s_1.a").string == "snapshot/cam-2/s_1.a/")
        #expect(try Topic.health(process: "worker-cam0").string == "health/worker-cam0/")
    }

    @Test(arguments: [
        "pose/cam0/", "event/cam0/left/", "snapshot/cam0/right/", "health/broker/",
        "pose/A.b_c-9/", "health/\(String(repeating: "x", count: 64))/",
    ])
    func parsingAndPrintingRoundTrip(text: String) throws {
        let topic = try Topic(parsing: text)
        #expect(topic.string == text)
        #expect(try Topic(parsing: Array(text.utf8)) == topic)
    }

    @Test func parsedTopicExposesItsNames() throws {
        let event = try Topic(parsing: "event/cam1/left/")
        #expect(event.kind == .event)
        #expect(event.camera == "cam1")
        #expect(event.session == "left")
        #expect(event.process == nil)
        let health = try Topic(parsing: "health/ingest-cam1/")
        #expect(health.kind == .health)
        #expect(health.process == "ingest-cam1")
        #expect(health.camera == nil)
        #expect(health.session == nil)
        #expect(try Topic(parsing: "pose/cam1/") == Topic.pose(camera: "cam1"))
    }

    @Test(arguments: [
        ("", TopicError.empty),
        ("pose/cam1", .missingTrailingSlash),
        ("pose", .missingTrailingSlash),
        ("/", .unknownKind("")),
        ("poses/cam1/", .unknownKind("poses")),
        ("POSE/cam1/", .unknownKind("POSE")),
        ("pose/", .wrongComponentCount(kind: .pose, expected: 1, found: 0)),
        ("pose/cam1/extra/", .wrongComponentCount(kind: .pose, expected: 1, found: 2)),
        ("event/cam1/", .wrongComponentCount(kind: .event, expected: 2, found: 1)),
        ("pose//", .emptyName(.camera)),
        ("event/cam1//", .emptyName(.session)),
        ("pose/cam 1/", .invalidCharacter(.camera, byte: 0x20)),
        ("health/pro*c/", .invalidCharacter(.process, byte: UInt8(ascii: "*"))),
        ("pose/câm/", .invalidCharacter(.camera, byte: 0xC3)),
        ("pose/../", .reservedName(.camera, name: "..")),
        ("pose/./", .reservedName(.camera, name: ".")),
        ("pose/\(String(repeating: "x", count: 65))/", .nameTooLong(.camera, length: 65)),
    ])
    func parsingRejectsInvalidTopicsWithTheReason(text: String, error: TopicError) {
        #expect(throws: error) { try Topic(parsing: text) }
    }

    @Test func parsingRejectsOverlongTopicsBeforeLookingAtThem() {
        let text = "event/" + String(repeating: "a", count: 200) + "/"
        #expect(throws: TopicError.tooLong(length: text.utf8.count)) { try Topic(parsing: text) }
    }

    @Test func factoriesRejectInvalidNames() {
        #expect(throws: TopicError.emptyName(.camera)) { try Topic.pose(camera: "") }
        #expect(throws: TopicError.invalidCharacter(.camera, byte: UInt8(ascii: "/"))) {
            try Topic.pose(camera: "cam/1")
        }
        #expect(throws: TopicError.invalidCharacter(.session, byte: 0x20)) {
            try Topic.event(camera: "cam1", session: "left side")
        }
        #expect(throws: TopicError.emptyName(.process)) { try Topic.health(process: "") }
        #expect(throws: TopicError.invalidCharacter(.session, byte: 0x00)) {
            try Topic.snapshot(camera: "cam1", session: "a\u{0}")
        }
        #expect(Topic.isValidName("cam-1.a_b"))
        #expect(!Topic.isValidName("cam 1"))
    }

    @Test func errorsDescribeTheProblem() {
        #expect(TopicError.invalidCharacter(.camera, byte: 0x20).description.contains("camera"))
        #expect(TopicError.missingTrailingSlash.description.contains("/"))
    }
}

struct TopicPrefixTests {
    @Test func prefixesAreWholeComponents() throws {
        #expect(TopicPrefix.everything.string == "")
        #expect(TopicPrefix.kind(.event).string == "event/")
        #expect(try TopicPrefix.events(camera: "cam1").string == "event/cam1/")
        #expect(try TopicPrefix.snapshots(camera: "cam1").string == "snapshot/cam1/")
        #expect(try TopicPrefix.poses(camera: "cam1").string == "pose/cam1/")
        #expect(try TopicPrefix.topic(.event(camera: "c", session: "s")).string == "event/c/s/")
    }

    @Test func cameraPrefixNeverMatchesALongerCameraName() throws {
        let cam1 = try TopicPrefix.poses(camera: "cam1")
        #expect(cam1.matches(try Topic.pose(camera: "cam1")))
        #expect(!cam1.matches(try Topic.pose(camera: "cam10")))
        #expect(!cam1.matches(try Topic.pose(camera: "cam1a")))
        let events = try TopicPrefix.events(camera: "cam1")
        #expect(events.matches(try Topic.event(camera: "cam1", session: "left")))
        #expect(!events.matches(try Topic.event(camera: "cam10", session: "left")))
        #expect(!events.matches(try Topic.snapshot(camera: "cam1", session: "left")))
    }

    @Test func everyPrefixMatchesExactlyTheTopicsWithThatCamera() throws {
        // Byte-prefix logic as libzmq applies it, over many names that prefix each other.
        let cameras = ["c", "c1", "c10", "c1.", "c1-", "c1_0", "cam1", "cam10", "cam100"]
        for subscribed in cameras {
            let prefix = try TopicPrefix.poses(camera: subscribed)
            for published in cameras {
                let topic = try Topic.pose(camera: published)
                #expect(prefix.matches(topicFrame: topic.bytes) == (subscribed == published))
            }
        }
    }

    @Test func kindPrefixMatchesEveryTopicOfThatKindOnly() throws {
        let event = try Topic.event(camera: "cam1", session: "left")
        let snapshot = try Topic.snapshot(camera: "cam1", session: "left")
        #expect(TopicPrefix.kind(.event).matches(event))
        #expect(!TopicPrefix.kind(.event).matches(snapshot))
        #expect(TopicPrefix.everything.matches(snapshot))
        #expect(!TopicPrefix.kind(.pose).matches(topicFrame: Array("pose".utf8)))
    }

    @Test func aParsedTopicIsEqualToTheOneMadeByItsFactoryAndHashesAlike() throws {
        let made = [
            try Topic.pose(camera: "cam0"), try .event(camera: "cam0", session: "left"),
            try .snapshot(camera: "cam12", session: "right"), try .session(camera: "c", session: "s"),
            try .health(process: "worker-1"),
        ]
        for topic in made {
            let parsed = try Topic(parsing: topic.bytes)
            #expect(parsed == topic)
            #expect(parsed.hashValue == topic.hashValue)
            #expect(Set([parsed, topic]).count == 1)
        }
        // Every pair of different topics is different, though they share names and kinds.
        for (index, topic) in made.enumerated() {
            for other in made[(index + 1)...] { #expect(topic != other) }
        }
        #expect(
            try Topic.event(camera: "cam0", session: "left") != .snapshot(camera: "cam0", session: "left"))
        #expect(try Topic.event(camera: "a", session: "bc") != .event(camera: "ab", session: "c"))
    }
}
