import Foundation
import KinesiaControl
import KinesiaMotion
import KinesiaWire
import Testing

/// The control socket's messages: written and read back exactly, refused with what is wrong.
struct ControlMessageTests {
    static let kneeFile = #"{"exercise":"kneeExtension","reps":{"start":40,"end":25,"minPeak":70}}"#

    /// A plan whose run begins at its camera's stream's first pose says so, as the coordinator
    /// keeps it and sends it; a plan kept before the field existed reads as one that does not;
    /// a start request cannot ask for it (the coordinator decides).
    @Test func whereARunBeginsIsKeptWithItsPlanAndAnOldPlanReadsWithout() throws {
        var plan = try SessionPlan(
            key: SessionKey(parsing: "cam0/left"), exerciseFile: SessionPlan.catalogExercise("squat"),
            analysis: .left, run: 7)
        let old = String(decoding: ControlMessage.encoded(plan), as: UTF8.self)
        #expect(!old.contains("fromStreamStart"))
        #expect(try ControlMessage.plan(decoding: Array(old.utf8)).beginsAtStreamStart == false)
        plan.beginsAtStreamStart = true
        let kept = ControlMessage.encoded(plan)
        #expect(String(decoding: kept, as: UTF8.self).hasSuffix(#","fromStreamStart":true}"#))
        #expect(try ControlMessage.plan(decoding: kept) == plan)
        let assignment = ControlMessage.assignment(WorkerAssignment(epoch: 2, sessions: [plan]))
        #expect(try ControlMessage(decoding: assignment.encoded()) == assignment)
        let start = ControlMessage.request(try ControlRequest(id: "r1", command: .start(plan)))
        #expect(!String(decoding: start.encoded(), as: UTF8.self).contains("fromStreamStart"))
        let asked =
            #"{"type":"request","id":"r1","command":"start","session":"cam0/left","exercise":"squat","side":"left","fromStreamStart":true}"#
        #expect(throws: ControlError.self) { try ControlMessage(decoding: Array(asked.utf8)) }
    }

    static func messages() throws -> [ControlMessage] {
        let plan = try SessionPlan(
            key: SessionKey(parsing: "cam0/left"), exerciseFile: kneeFile, analysis: .left, patient: "p-17",
            pool: "clinic", worker: "w1", run: 18_446_744_073_709_551_615)
        var requested = plan
        requested.run = 0
        var baseline = plan
        baseline.baselineReps = 3
        let catalog = try SessionPlan(
            key: SessionKey(parsing: "cam1/both"), exerciseFile: SessionPlan.catalogExercise("squat"),
            analysis: .analytics)
        return [
            .request(try ControlRequest(id: "r-1", command: .start(requested))),
            .request(try ControlRequest(id: "r-2", command: .stop(SessionKey(parsing: "cam0/left")))),
            .request(try ControlRequest(id: "r-3", command: .reset(SessionKey(parsing: "cam0/left")))),
            .request(try ControlRequest(id: "r-4", command: .list)),
            .request(
                try ControlRequest(id: "r-6", command: .baseline(SessionKey(parsing: "cam0/left"), reps: 3))),
            .request(
                try ControlRequest(id: "r-7", command: .baseline(SessionKey(parsing: "cam0/left"), reps: nil))
            ),
            .answer(
                ControlAnswer(
                    id: "r-6", outcome: .baselineStarted, message: "cam0/left baseline", worker: "w1", run: 4)
            ),
            .answer(
                ControlAnswer(
                    id: "r-1", outcome: .started, message: "cam0/left \"started\"", worker: "w1", run: 3)),
            .answer(
                ControlAnswer(
                    id: "r-4", outcome: .listed, message: "2 session(s)",
                    sessions: [
                        SessionStatus(
                            plan: plan, worker: "w1", state: .running, repCount: 5, rejectedCount: 1),
                        SessionStatus(plan: catalog, worker: nil, state: .waiting),
                    ])),
            .answer(ControlAnswer(id: "r-5", outcome: .listed, message: "0 session(s)")),
            .workerReport(
                WorkerReport(
                    worker: "w1", pool: "clinic", capacity: 32,
                    sessions: [
                        .init(
                            key: try SessionKey(parsing: "cam0/left"), run: 3, repCount: 5, rejectedCount: 1)
                    ],
                    epoch: 9)),
            .assignment(WorkerAssignment(epoch: 10, sessions: [plan, catalog, baseline])),
            .assignment(
                WorkerAssignment(
                    epoch: 11, sessions: [catalog],
                    stopped: [
                        try SessionKey(parsing: "cam0/left"): 3, try SessionKey(parsing: "cam0/right"): 2,
                    ])),
        ]
    }

    @Test func everyMessageReadsBackAsItWasWritten() throws {
        for message in try Self.messages() {
            #expect(try ControlMessage(decoding: message.encoded()) == message)
        }
    }

    /// The committed vectors (`Fixtures/control-messages.jsonl`, read by the Python client's
    /// tests too) are what the messages encode to, byte for byte. After a deliberate change:
    /// `KINESIA_WRITE_VECTORS=1 swift test --filter ControlMessageTests`.
    @Test func theCommittedVectorsAreWhatTheMessagesEncodeTo() throws {
        let path = #filePath.replacingOccurrences(
            of: "ControlMessageTests.swift", with: "Fixtures/control-messages.jsonl")
        let lines = try Self.messages().map { String(decoding: $0.encoded(), as: UTF8.self) }
        let text = lines.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["KINESIA_WRITE_VECTORS"] == "1" {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        for line in text.split(separator: "\n") {
            _ = try ControlMessage(decoding: Array(line.utf8))
        }
    }

    static func runRecords() throws -> [RunRecord] {
        let plan = try SessionPlan(
            key: SessionKey(parsing: "cam0/left"), exerciseFile: kneeFile, analysis: .left, patient: "p-17",
            run: 3)
        let hold = try SessionPlan(
            key: SessionKey(parsing: "cam1/wall"), exerciseFile: SessionPlan.catalogExercise("wallSit"),
            analysis: .right, run: 4)
        return [
            .started(plan), .started(hold),
            .ended(.init(run: 3, key: plan.key, reason: .reset, repCount: 5, rejectedCount: 1, best: 101.25)),
            .ended(.init(run: 4, key: hold.key, reason: .stopped, repCount: 0, rejectedCount: 0, best: 0)),
            .baselineStarted(run: 5, key: plan.key, reps: 3),
            .ended(
                .init(
                    run: 5, key: plan.key, reason: .stopped, repCount: 2, rejectedCount: 1, best: 131.5,
                    reps: [
                        Rep(peak: 120.25, faults: [], start: 1.5, end: 3.25),
                        Rep(peak: 131.5, faults: [.keepTrunkUpright], start: 4, end: 6.5),
                        Rep(peak: 125, faults: [], start: 7, end: 9),
                    ],
                    faults: [.keepTrunkUpright: 2], baseline: 125,
                    firstPose: .init(stream: StreamID(0x0123_4567_89AB_CDEF), sequence: 0),
                    lastPose: .init(stream: StreamID(0x0123_4567_89AB_CDEF), sequence: 1457))),
        ]
    }

    /// The run records of `session/<camera>/<name>/`: read back as written, and the committed
    /// vectors (`Fixtures/run-records.jsonl`, read by the Python client too) are what they
    /// encode to.
    @Test func runRecordsReadBackAndMatchTheCommittedVectors() throws {
        let path = #filePath.replacingOccurrences(
            of: "ControlMessageTests.swift", with: "Fixtures/run-records.jsonl")
        let records = try Self.runRecords()
        for record in records { #expect(try RunRecord(json: record.json()) == record) }
        let text = records.map { $0.json() }.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["KINESIA_WRITE_VECTORS"] == "1" {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        for broken in [
            #"{"type":"runPaused","run":"1","camera":"c","session":"s"}"#,
            #"{"type":"runEnded","run":"x","camera":"c","session":"s","reason":"stopped","repCount":1,"rejectedCount":0,"best":0}"#,
            #"{"type":"runEnded","run":"1","camera":"c","session":"s","reason":"lunch","repCount":1,"rejectedCount":0,"best":0}"#,
            #"{"type":"runEnded","run":"1","camera":"c","session":"s","reason":"reset","repCount":1,"rejectedCount":0,"best":0,"faults":{"napping":1}}"#,
            #"{"type":"runEnded","run":"1","camera":"c","session":"s","reason":"reset","repCount":1,"rejectedCount":0,"best":0,"reps":[{"peak":1}]}"#,
            #"{"type":"baselineStarted","run":"1","camera":"c","session":"s","reps":0}"#,
        ] {
            #expect(throws: ControlError.self) { try RunRecord(json: broken) }
        }
    }

    @Test func aBaselineOfNoRepsOrTooManyIsRefused() {
        for reps in [0, -1, 101] {
            let text =
                #"{"type":"request","id":"a","command":"baseline","session":"c/l","reps":"# + "\(reps)}"
            #expect(throws: ControlError.self) { try ControlMessage(decoding: Array(text.utf8)) }
        }
        let start =
            #"{"type":"request","id":"a","command":"start","session":"c/l","exercise":"squat","side":"left","baselineReps":3}"#
        #expect(throws: ControlError.self, "a start may not give a baseline") {
            try ControlMessage(decoding: Array(start.utf8))
        }
    }

    @Test func aRequestMayNotGiveTheRun() {
        let text =
            #"{"type":"request","id":"a","command":"start","session":"c/l","exercise":"squat","side":"left","run":"5"}"#
        #expect(throws: ControlError.self) { try ControlMessage(decoding: Array(text.utf8)) }
    }

    @Test func aStartRequestIsOneJSONLineWithTheExerciseFile() throws {
        let plan = try SessionPlan(
            key: SessionKey(parsing: "cam0/left"), exerciseFile: SessionPlan.catalogExercise("squat"),
            analysis: .right)
        let text = String(
            decoding: ControlMessage.request(try ControlRequest(id: "a", command: .start(plan))).encoded(),
            as: UTF8.self)
        #expect(
            text
                == #"{"type":"request","id":"a","command":"start","session":"cam0/left","exercise":"squat","exerciseFile":"{\"exercise\":\"squat\"}","side":"right","pool":"default"}"#
        )
        // A client may leave the exercise file out: the catalog's thresholds.
        let short =
            #"{"type":"request","id":"a","command":"start","session":"cam0/left","exercise":"squat","side":"right"}"#
        #expect(
            try ControlMessage(decoding: Array(short.utf8))
                == .request(try ControlRequest(id: "a", command: .start(plan))))
    }

    @Test(arguments: [
        ("not json", "not JSON"),
        (#"{"type":"hello"}"#, #"unknown control message type "hello""#),
        (#"{"type":"request","id":"a","command":"launch"}"#, #"unknown command "launch""#),
        (#"{"type":"request","id":"a","command":"list","extra":1}"#, "extra"),
        (#"{"type":"request","id":"../x","command":"list"}"#, "invalid request id"),
        (#"{"type":"request","id":"a","command":"stop","session":"cam0"}"#, "expected CAMERA/NAME"),
        (#"{"type":"request","id":"a","command":"stop","session":"cam 0/left"}"#, "invalid camera"),
        (
            #"{"type":"request","id":"a","command":"start","session":"c/l","exercise":"jump","side":"left"}"#,
            #"unknown exercise "jump""#
        ),
        (
            #"{"type":"request","id":"a","command":"start","session":"c/l","exercise":"squat","side":"up"}"#,
            #"invalid side "up""#
        ),
        (
            #"{"type":"request","id":"a","command":"start","session":"c/l","exercise":"squat","exerciseFile":"{\"exercise\":\"squat\",\"reps\":{\"end\":90}}","side":"left"}"#,
            "end: must be below start"
        ),
        (
            #"{"type":"request","id":"a","command":"start","session":"c/l","exercise":"plank","exerciseFile":"{\"exercise\":\"squat\"}","side":"left"}"#,
            "differs from the exercise file's squat"
        ),
        (
            #"{"type":"workerReport","worker":"w","pool":"p","capacity":-1,"epoch":"0","sessions":[]}"#,
            "negative"
        ),
        (#"{"type":"assignment","epoch":"-3","sessions":[]}"#, "decimal string"),
        (#"{"type":"assignment","epoch":"99999999999999999999","sessions":[]}"#, "decimal string"),
    ])
    func foreignOrInvalidMessagesAreRefusedSayingWhat(text: String, expected: String) {
        do {
            let message = try ControlMessage(decoding: Array(text.utf8))
            Issue.record("read \(message)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test func aMessageTooLargeIsRefusedUnread() {
        let bytes = [UInt8](repeating: UInt8(ascii: " "), count: ControlMessage.maximumSize + 1)
        #expect(throws: ControlError.self) { try ControlMessage(decoding: bytes) }
    }

    @Test func exitCodesFollowTheOtherCommands() {
        #expect(
            ControlAnswer.Outcome.allCases.filter { $0.exitCode == 0 } == [
                .started, .stopped, .reset, .baselineStarted, .listed,
            ])
        #expect(ControlAnswer.Outcome.invalid.exitCode == 64)
    }
}
