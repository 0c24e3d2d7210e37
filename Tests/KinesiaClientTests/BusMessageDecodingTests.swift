import KinesiaClient
import KinesiaMotion
import KinesiaWire
import Testing

/// Deliveries of a subscriber into typed values, with no socket: each kind of message, gaps,
/// restarts and malformed payloads.
struct BusMessageDecodingTests {
    @Test func anEventComesAsAMotionEventWithItsOriginAndPoseTime() throws {
        var receiver = Receiver()
        let values = receiver.receive(try Sent.event(.repCompleted(Sent.rep), at: 3.0, sequence: 0))
        #expect(values.count == 1)
        guard case .event(let event) = try #require(values.first) else {
            Issue.record("not an event: \(values)")
            return
        }
        #expect(event.event == .repCompleted(Sent.rep))
        #expect(event.t == 3.0)
        #expect(event.camera == "cam0")
        #expect(event.session == "left")
        #expect(event.topic.string == "event/cam0/left/")
        #expect(event.sequence == 0)
        #expect(event.streamID == Sent.stream)
        #expect(event.header.sentAt == 1_700_000_000_000_000_000)
    }

    @Test(arguments: [
        MotionEvent.holdStarted, .formFault(.keepTrunkUpright), .baselineCompleted(41.5),
        .visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftKnee])),
        .setupChanged([.faceCamera]), .repRejected(Sent.rep),
    ])
    func everyEventKindKeepsItsValue(_ sent: MotionEvent) throws {
        var receiver = Receiver()
        let values = receiver.receive(try Sent.event(sent, at: 7.25, sequence: 0))
        guard case .event(let event) = values.first, values.count == 1 else {
            Issue.record("not one event: \(values)")
            return
        }
        #expect(event.event == sent)
        #expect(event.t == 7.25)
    }

    @Test func aSnapshotComesAsAMotionSnapshot() throws {
        var snapshot = MotionSnapshot()
        snapshot.repCount = 3
        snapshot.best = 101.5
        snapshot.lastRep = Sent.rep
        snapshot.isVisible = true
        snapshot.isRunning = true
        snapshot.setupIssues = [.faceCamera]
        var receiver = Receiver()
        let values = receiver.receive(try Sent.snapshot(snapshot, at: 9.5, sequence: 4))
        guard case .snapshot(let received) = values.first, values.count == 1 else {
            Issue.record("not one snapshot: \(values)")
            return
        }
        #expect(received.snapshot == snapshot)
        #expect(received.t == 9.5)
        #expect(received.camera == "cam0" && received.session == "left")
        #expect(received.sequence == 4)
    }

    @Test func aHealthReportComesWithItsProcess() throws {
        var receiver = Receiver()
        let values = receiver.receive(try Sent.health(sequence: 2))
        guard case .health(let health) = values.first, values.count == 1 else {
            Issue.record("not one health report: \(values)")
            return
        }
        #expect(health.report == Sent.report)
        #expect(health.process == "worker-cam0")
        #expect(health.sequence == 2)
    }

    @Test func aPoseComesWithItsCamera() throws {
        var receiver = Receiver()
        let values = receiver.receive(try Sent.pose(sequence: 0))
        guard case .pose(let pose) = values.first, values.count == 1 else {
            Issue.record("not one pose: \(values)")
            return
        }
        #expect(pose.pose == Sent.pose)
        #expect(pose.camera == "cam0")
    }

    @Test func missingSequenceNumbersComeAsAGapBeforeTheNextMessage() throws {
        var receiver = Receiver()
        _ = receiver.receive(try Sent.event(.holdStarted, at: 1, sequence: 0))
        _ = receiver.receive(try Sent.event(.holdStarted, at: 2, sequence: 1))
        let values = receiver.receive(try Sent.event(.holdStarted, at: 5, sequence: 4))
        let topic = try Topic.event(camera: "cam0", session: "left")
        #expect(values.count == 2)
        #expect(values.first == .gap(.missed(topic: topic, count: 2, before: 4)))
        guard case .event(let event) = values.last else {
            Issue.record("no event after the gap: \(values)")
            return
        }
        #expect(event.sequence == 4)
        #expect(event.t == 5)
    }

    @Test func aSenderRestartComesAsAGapAndIsNotALoss() throws {
        var receiver = Receiver()
        _ = receiver.receive(try Sent.event(.holdStarted, at: 1, sequence: 0))
        _ = receiver.receive(try Sent.event(.holdStarted, at: 2, sequence: 1))
        let restarted = StreamID(99)
        let values = receiver.receive(try Sent.event(.holdStarted, at: 0.5, sequence: 0, stream: restarted))
        let topic = try Topic.event(camera: "cam0", session: "left")
        #expect(values.count == 2)
        #expect(values.first == .gap(.senderRestarted(topic: topic, stream: restarted)))
        if case .event(let event) = values.last {
            #expect(event.streamID == restarted)
        } else {
            Issue.record("no event after the restart: \(values)")
        }
    }

    @Test func aConsumerThatJoinsLateSeesNoGapAndADuplicateIsDropped() throws {
        var receiver = Receiver()
        let first = receiver.receive(try Sent.event(.holdStarted, at: 1, sequence: 57))
        #expect(first.count == 1)
        #expect(receiver.receive(try Sent.event(.holdStarted, at: 1, sequence: 57)).isEmpty)
        #expect(receiver.receive(try Sent.event(.holdStarted, at: 2, sequence: 58)).count == 1)
    }

    @Test func gapsAreSeparatePerTopic() throws {
        var receiver = Receiver()
        _ = receiver.receive(try Sent.event(.holdStarted, at: 1, sequence: 0, session: "left"))
        _ = receiver.receive(try Sent.event(.holdStarted, at: 1, sequence: 0, session: "right"))
        #expect(
            receiver.receive(try Sent.event(.holdStarted, at: 2, sequence: 1, session: "right")).count == 1)
        let left = receiver.receive(try Sent.event(.holdStarted, at: 3, sequence: 2, session: "left"))
        #expect(
            left.first
                == .gap(.missed(topic: try .event(camera: "cam0", session: "left"), count: 1, before: 2)))
    }

    @Test(arguments: [
        ("{\"type\":\"holdStarted\"", "json.invalidJSON"),
        ("{\"type\":\"somethingNew\",\"t\":1}", "json.unknownType"),
        ("{\"type\":\"formFault\",\"t\":1,\"fault\":\"noSuchFault\"}", "json.invalidRecord"),
        ("{\"type\":\"repCompleted\",\"t\":1}", "json.invalidRecord"),
    ])
    func eventJSONThatMotionJSONRefusesIsMalformedWithItsHeader(_ json: String, _ code: String) throws {
        let topic = try Topic.event(camera: "cam0", session: "left")
        var receiver = Receiver()
        let values = receiver.receive(Sent.json(json, kind: .event, on: topic, sequence: 0))
        guard case .malformed(let malformed) = values.first, values.count == 1 else {
            Issue.record("not one malformed value: \(values)")
            return
        }
        #expect(malformed.reason.code == code)
        #expect(malformed.topic == "event/cam0/left/")
        #expect(malformed.header?.sequence == 0)
    }

    @Test func aSnapshotOnAnEventTopicIsMalformed() throws {
        let topic = try Topic.event(camera: "cam0", session: "left")
        let json = MotionJSON.encode(MotionSnapshot(), at: 1)
        var receiver = Receiver()
        let values = receiver.receive(Sent.json(json, kind: .event, on: topic, sequence: 0))
        guard case .malformed(let malformed) = values.first else {
            Issue.record("not malformed: \(values)")
            return
        }
        #expect(malformed.reason.code == "json.invalidRecord")
        #expect(malformed.description.contains("expected an event"))
    }

    @Test func aMalformedMessageStillCountsForTheSequenceNumbers() throws {
        let topic = try Topic.event(camera: "cam0", session: "left")
        var receiver = Receiver()
        _ = receiver.receive(try Sent.event(.holdStarted, at: 1, sequence: 0))
        let values = receiver.receive(Sent.json("not json", kind: .event, on: topic, sequence: 3))
        #expect(values.first == .gap(.missed(topic: topic, count: 2, before: 3)))
        if case .malformed = values.last {} else { Issue.record("not malformed: \(values)") }
    }

    @Test func framesThatDoNotDecodeAreMalformedWithTheirReason() {
        let values = BusMessage.messages(
            from: .malformed(topic: "event/cam0/left/", reason: .wire(.badMagic)))
        #expect(
            values == [
                .malformed(MalformedMessage(topic: "event/cam0/left/", reason: .wire(.wire(.badMagic))))
            ])
        #expect(MalformedMessage(topic: "x", reason: .wire(.frameCount(3))).reason.code == "frameCount")
    }
}
