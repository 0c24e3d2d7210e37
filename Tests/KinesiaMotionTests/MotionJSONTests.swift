import KinesiaMotion
import Testing

struct MotionJSONTests {
    static let rep = Rep(
        peak: 95.25, faults: [.keepElbowStraight, .keepTrunkUpright], start: 1.5, end: 3.0166666666666666)

    /// Every event case, with the exact line it must give at t = 2.5.
    static let events: [(event: MotionEvent, line: String)] = [
        (
            .repCompleted(Rep(peak: 120.0, faults: [], start: 0.5, end: 2.5)),
            #"{"type":"repCompleted","t":2.5,"rep":{"peak":120.0,"faults":[],"start":0.5,"end":2.5}}"#
        ),
        (
            .repRejected(rep),
            #"{"type":"repRejected","t":2.5,"rep":{"peak":95.25,"faults":["keepElbowStraight","keepTrunkUpright"],"start":1.5,"end":3.0166666666666666}}"#
        ),
        (.holdStarted, #"{"type":"holdStarted","t":2.5}"#),
        (.formFault(.keepTrunkUpright), #"{"type":"formFault","t":2.5,"fault":"keepTrunkUpright"}"#),
        (
            .visibilityChanged(Visibility(isVisible: false, missingJoints: [.leftElbow, .leftWrist])),
            #"{"type":"visibilityChanged","t":2.5,"visibility":{"isVisible":false,"missingJoints":["leftElbow","leftWrist"]}}"#
        ),
        (
            .visibilityChanged(Visibility(isVisible: true, missingJoints: [])),
            #"{"type":"visibilityChanged","t":2.5,"visibility":{"isVisible":true,"missingJoints":[]}}"#
        ),
        (
            .setupChanged([.tooFar, .lowConfidence, .turnSideways]),
            #"{"type":"setupChanged","t":2.5,"issues":["lowConfidence","tooFar","turnSideways"]}"#
        ),
        (.setupChanged([]), #"{"type":"setupChanged","t":2.5,"issues":[]}"#),
        (.baselineCompleted(101.5), #"{"type":"baselineCompleted","t":2.5,"value":101.5}"#),
    ]

    @Test(arguments: events.indices)
    func encodesEachEventAsOneFixedLine(_ index: Int) {
        let (event, line) = Self.events[index]
        #expect(MotionJSON.encode(event, at: 2.5) == line)
    }

    @Test(arguments: events.indices)
    func eachEventReadsBack(_ index: Int) throws {
        let (event, line) = Self.events[index]
        let decoded = try MotionJSON.decodeEvent(line)
        #expect(decoded.t == 2.5)
        #expect(decoded.event == event)
    }

    @Test func awkwardNumbersRoundTripExactly() throws {
        for t in [0.1 + 0.2, 1.0 / 3.0, 1e-7, 123_456_789.123_456_78, 0.016667] {
            let event = MotionEvent.baselineCompleted(t * 7)
            let decoded = try MotionJSON.decodeEvent(MotionJSON.encode(event, at: t))
            #expect(decoded.t == t)
            #expect(decoded.event == event)
        }
    }

    static func fullSnapshot() -> MotionSnapshot {
        var snapshot = MotionSnapshot()
        snapshot.value = 42.125
        snapshot.best = 130.5
        snapshot.repCount = 3
        snapshot.rejectedCount = 1
        snapshot.lastRep = rep
        snapshot.holdProgress = 0.75
        snapshot.confidence = 0.625
        snapshot.setupIssues = [.tooClose, .lowConfidence]
        snapshot.isVisible = false
        snapshot.missingJoints = [.rightHip, .rightKnee]
        snapshot.isRunning = true
        snapshot.baseline = BaselineProgress(completed: 1, target: 3, value: 88.5)
        return snapshot
    }

    @Test func encodesASnapshotWithEveryFieldInOrder() {
        #expect(
            MotionJSON.encode(Self.fullSnapshot(), at: 9.75)
                == #"{"type":"snapshot","t":9.75,"value":42.125,"best":130.5,"repCount":3,"rejectedCount":1,"lastRep":{"peak":95.25,"faults":["keepElbowStraight","keepTrunkUpright"],"start":1.5,"end":3.0166666666666666},"holdProgress":0.75,"confidence":0.625,"setupIssues":["lowConfidence","tooClose"],"isVisible":false,"missingJoints":["rightHip","rightKnee"],"isRunning":true,"baseline":{"completed":1,"target":3,"value":88.5}}"#
        )
        #expect(
            MotionJSON.encode(MotionSnapshot(), at: 0)
                == #"{"type":"snapshot","t":0.0,"value":null,"best":0.0,"repCount":0,"rejectedCount":0,"lastRep":null,"holdProgress":null,"confidence":null,"setupIssues":[],"isVisible":false,"missingJoints":[],"isRunning":false,"baseline":null}"#
        )
    }

    @Test func snapshotsReadBack() throws {
        var partial = MotionSnapshot()
        partial.baseline = BaselineProgress(completed: 0, target: 2, value: nil)
        for snapshot in [Self.fullSnapshot(), MotionSnapshot(), partial] {
            let decoded = try MotionJSON.decodeSnapshot(MotionJSON.encode(snapshot, at: 4.25))
            #expect(decoded.t == 4.25)
            #expect(decoded.snapshot == snapshot)
        }
    }

    @Test func framesAndSummariesRoundTrip() throws {
        let frames = [
            MotionFrame(t: 1.5, raw: 42.3, value: 41.9), MotionFrame(t: 1.5, raw: nil, value: nil),
            MotionFrame(t: 0, raw: 12, value: nil),
        ]
        #expect(MotionJSON.encode(frames[0]) == #"{"type":"frame","t":1.5,"raw":42.3,"value":41.9}"#)
        #expect(MotionJSON.encode(frames[1]) == #"{"type":"frame","t":1.5,"raw":null,"value":null}"#)
        for frame in frames {
            #expect(try MotionJSON.decode(MotionJSON.encode(frame)) == .frame(frame))
        }
        let summary = MotionSummary(repCount: 1, rejectedCount: 1, best: 120.0, reps: [Self.rep, Self.rep])
        #expect(
            MotionJSON.encode(MotionSummary(repCount: 0, rejectedCount: 0, best: 0, reps: []))
                == #"{"type":"summary","repCount":0,"rejectedCount":0,"best":0.0,"reps":[],"rejectedPoses":{"total":0,"nonFinite":0,"timestampNotIncreasing":0,"absurdCoordinates":0,"absurdTimestamp":0,"timestampOutlier":0}}"#
        )
        #expect(try MotionJSON.decode(MotionJSON.encode(summary)) == .summary(summary))
        // The poses dropped, by reason, read back; a summary written before them reads as none.
        var dropped = summary
        dropped.rejectedPoses = PoseRejections(timestampNotIncreasing: 201, timestampOutlier: 1)
        #expect(try MotionJSON.decode(MotionJSON.encode(dropped)) == .summary(dropped))
        #expect(
            try MotionJSON.decode(#"{"type":"summary","repCount":0,"rejectedCount":0,"best":0.0,"reps":[]}"#)
                == .summary(MotionSummary(repCount: 0, rejectedCount: 0, best: 0, reps: [])))
    }

    @Test func decodingAcceptsAnyKeyOrderAndIgnoresUnknownKeys() throws {
        let decoded = try MotionJSON.decodeEvent(
            #"{"fault": "keepHipsLevel", "extra": [1], "t": 3, "type": "formFault"}"#)
        #expect(decoded.t == 3)
        #expect(decoded.event == .formFault(.keepHipsLevel))
    }

    @Test func nonFiniteNumbersAreWrittenAsNull() {
        var snapshot = MotionSnapshot()
        snapshot.value = .nan
        #expect(MotionJSON.encode(snapshot, at: 1).contains(#""value":null"#))
        #expect(
            MotionJSON.encode(MotionFrame(t: 1, raw: .infinity, value: 2))
                == #"{"type":"frame","t":1.0,"raw":null,"value":2.0}"#)
    }

    static let badLines: [(line: String, kind: MotionJSONError.Kind, mentions: String)] = [
        ("not json", .invalidJSON, "invalid JSON"),
        (
            #"{"type":"formFault","t":1,"fault":"keepSmiling"}"#, .invalidRecord,
            "unknown fault \"keepSmiling\""
        ),
        (#"{"type":"formFault","t":1}"#, .invalidRecord, "missing key \"fault\""),
        (#"{"type":"holdStarted"}"#, .invalidRecord, "missing key \"t\""),
        (#"{"type":"holdStarted","t":"1"}"#, .invalidRecord, "\"t\" must be a number"),
        (#"{"type":"teleported","t":1}"#, .unknownType, "unknown type \"teleported\""),
        (#"{"t":1}"#, .invalidRecord, "missing key \"type\""),
        (#"[1]"#, .invalidRecord, "must be an object"),
        (#"{"type":"setupChanged","t":1,"issues":["tooDark"]}"#, .invalidRecord, "unknown setup issue"),
        (
            #"{"type":"visibilityChanged","t":1,"visibility":{"isVisible":1,"missingJoints":[]}}"#,
            .invalidRecord, "isVisible"
        ),
        (
            #"{"type":"visibilityChanged","t":1,"visibility":{"isVisible":true,"missingJoints":["toe"]}}"#,
            .invalidRecord, "unknown joint"
        ),
        (
            #"{"type":"repCompleted","t":1,"rep":{"peak":1,"faults":[],"start":0}}"#, .invalidRecord,
            "missing key \"end\""
        ),
        (
            #"{"type":"summary","repCount":1.5,"rejectedCount":0,"best":0,"reps":[]}"#, .invalidRecord,
            "whole number"
        ),
        (
            #"{"type":"summary","repCount":1,"rejectedCount":0,"best":0,"reps":[],"rejectedPoses":{"nonFinite":-1}}"#,
            .invalidRecord, "must not be negative"
        ),
        (
            #"{"type":"summary","repCount":1,"rejectedCount":0,"best":0,"reps":[],"rejectedPoses":[]}"#,
            .invalidRecord, "rejectedPoses"
        ),
        (#"{"type":"frame","t":1,"raw":null}"#, .invalidRecord, "missing key \"value\""),
        (#"{"type":"snapshot","t":1}"#, .invalidRecord, "missing key"),
        (#"{"type":"baselineCompleted","t":1,"value":NaN}"#, .invalidJSON, "invalid JSON"),
    ]

    @Test(arguments: badLines.indices)
    func refusesBadLinesWithATypedError(_ index: Int) {
        let (line, kind, mentions) = Self.badLines[index]
        #expect {
            _ = try MotionJSON.decode(line)
        } throws: { error in
            guard let error = error as? MotionJSONError else { return false }
            return error.kind == kind && error.detail.contains(mentions)
        }
    }

    @Test func decodeEventRefusesASnapshotAndViceVersa() {
        let snapshot = MotionJSON.encode(MotionSnapshot(), at: 1)
        #expect(throws: MotionJSONError(.invalidRecord, detail: "expected an event, found a snapshot")) {
            try MotionJSON.decodeEvent(snapshot)
        }
        #expect(
            throws: MotionJSONError(
                .invalidRecord, detail: "expected a snapshot, found an event (holdStarted)")
        ) {
            try MotionJSON.decodeSnapshot(MotionJSON.encode(.holdStarted, at: 1))
        }
    }
}
