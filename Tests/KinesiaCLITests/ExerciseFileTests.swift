import Foundation
import Glibc
import KinesiaMotion
import KinesiaService
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaCLI
@testable import KinesiaWorker

/// Exercise files: a catalog exercise with changed thresholds, read strictly.
struct ExerciseFileTests {
    private func parse(_ text: String) throws(CLIError) -> Exercise {
        try ExerciseFile.parse(Array(text.utf8), file: "deep.json")
    }

    /// The failure message of `text`.
    private func failure(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            guard case .failure(let message) = error else { return nil }
            return message
        }
    }

    @Test func changesOnlyTheThresholdsGiven() throws {
        let exercise = try parse(
            """
            {"exercise": "squat", "reps": {"minPeak": 80}, "formRules": {"keepTrunkUpright": 35},
             "sessionRules": {"minimumRepDuration": 0.8}}
            """)
        #expect(exercise.kind == .reps(start: 30, end: 20, minPeak: 80))
        #expect(exercise.formRules.map(\.limit) == [35])
        #expect(exercise.sessionRules.minimumRepDuration == 0.8)
        #expect(exercise.sessionRules.maximumRepDuration == Exercise.squat.sessionRules.maximumRepDuration)
        #expect(exercise.measure == Exercise.squat.measure)
    }

    @Test func aFileWithOnlyTheIdIsTheCatalogExercise() throws {
        #expect(try parse(#"{"exercise": "wallSit"}"#) == Exercise.named("wallSit"))
        #expect(WorkerSession.identity(of: try parse(#"{"exercise": "wallSit"}"#)) == "wallSit")
    }

    @Test func aHoldTakesItsThresholdAndSeconds() throws {
        let exercise = try parse(#"{"exercise": "wallSit", "hold": {"threshold": 80, "seconds": 45}}"#)
        #expect(exercise.kind == .hold(threshold: 80, seconds: 45))
        #expect(WorkerSession.identity(of: exercise).hasPrefix("wallSit(thresholds "))
    }

    /// Every refusal names the file, the line and the column of the value, and the field.
    @Test(arguments: [
        ("{\n  \"exercise\": \"squat\",\n  \"extra\": 1\n}", "deep.json:3:12: extra: unknown key \"extra\""),
        ("{\"exercise\": \"squash\"}", "deep.json:1:14: exercise: unknown exercise \"squash\""),
        (
            "{\"exercise\": \"squat\", \"reps\": {\"start\": 181}}",
            "deep.json:1:41: reps.start: 181.0 is out of range"
        ),
        (
            "{\"exercise\": \"squat\", \"reps\": {\"start\": 30, \"end\": 40}}",
            "reps.end: must be below start"
        ),
        ("{\"exercise\": \"squat\", \"reps\": {\"minPeak\": 25}}", "reps.minPeak: must be at least start"),
        ("{\"exercise\": \"squat\", \"hold\": {\"seconds\": 5}}", "hold: squat counts reps"),
        ("{\"exercise\": \"wallSit\", \"reps\": {}}", "reps: wallSit is a hold"),
        (
            "{\"exercise\": \"squat\", \"formRules\": {\"keepElbowStraight\": 20}}",
            "unknown key \"keepElbowStraight\""
        ),
        ("{\"exercise\": \"wallSit\", \"hold\": {\"seconds\": 0}}", "hold.seconds: 0.0 is out of range"),
        (
            "{\"exercise\": \"squat\", \"sessionRules\": {\"minimumRepDuration\": 40}}",
            "must be below maximumRepDuration"
        ),
        ("{\"exercise\": \"squat\", \"reps\": {\"start\": \"30\"}}", "reps.start"),
        ("{\"exercise\": \"squat\",}", "deep.json:1:"),
        ("[]", "deep.json:1:1:"),
    ])
    func refusesWhatIsNotAValidFile(text: String, expected: String) {
        let message = failure(text)
        #expect(message?.contains(expected) == true, "\(message ?? "accepted")")
    }

    @Test func aWorkerSessionTakesAnExerciseFile() throws {
        let path = NSTemporaryDirectory() + "kinesia-exercise-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"exercise": "squat", "reps": {"minPeak": 70}}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        let session = try WorkerSession(parsing: "cam0/deep=@\(path):right", defaultCamera: nil)
        #expect(session.exercise.kind == .reps(start: 30, end: 20, minPeak: 70))
        #expect(session.side == .right)
        #expect(session.identity.hasPrefix("squat(thresholds "))
        #expect(session.identity.hasSuffix(":right"))
        #expect(try WorkerSession(parsing: "deep=squat:right", defaultCamera: "c").identity == "squat:right")
    }
}

/// Stream identities: which runs resume a stream.
struct StreamIdentityTests {
    private let stored = StreamIdentity(stream: StreamID(42), session: "squat:left")

    @Test func theSameSessionResumesItsStream() {
        let (identity, resumed) = StreamIdentity.resolve(
            stored: stored, session: "squat:left", newSession: false, random: { StreamID(7) })
        #expect(resumed)
        #expect(identity.stream == StreamID(42))
    }

    @Test(arguments: [
        (StreamIdentity?.none, "squat:left", false),
        (StreamIdentity(stream: StreamID(42), session: "squat:left"), "squat:right", false),
        (StreamIdentity(stream: StreamID(42), session: "squat:left"), "squat:left", true),
        (StreamIdentity(stream: StreamID(42), session: "squat:left", ended: true), "squat:left", false),
    ])
    func anotherSessionANewSessionOrAnEndedStreamStartsANewStream(
        stored: StreamIdentity?, session: String, newSession: Bool
    ) {
        let (identity, resumed) = StreamIdentity.resolve(
            stored: stored, session: session, newSession: newSession, random: { StreamID(7) })
        #expect(!resumed)
        #expect(identity == StreamIdentity(stream: StreamID(7), session: session))
    }

    @Test func theFileRoundTripsAndIsReadStrictly() throws {
        let identity = StreamIdentity(
            stream: StreamID(0xabc), session: "sim:squat \"x\" loop=false", ended: true)
        #expect(try StreamIdentity(json: Array(identity.json.utf8)) == identity)
        #expect(throws: CLIError.self) {
            try StreamIdentity(
                json: Array(#"{"ended":false,"session":"s","stream":"0000000000000001","x":1}"#.utf8))
        }
        #expect(throws: CLIError.self) {
            try StreamIdentity(json: Array(#"{"ended":false,"session":"s","stream":"zz"}"#.utf8))
        }
    }
}

/// The journal options' values.
struct JournalOptionsTests {
    @Test(arguments: [("2G", 2 << 30), ("500M", 500 << 20), ("64k", 64 << 10), ("1000", 1000)])
    func sizesTakeBinaryUnits(text: String, bytes: Int) {
        #expect(ByteCount(argument: text)?.value == bytes)
    }

    @Test(arguments: ["", "0", "-1G", "2X", "G"])
    func refusesSizesThatAreNone(text: String) {
        #expect(ByteCount(argument: text) == nil)
    }

    @Test(arguments: [("30d", 30 * 86_400), ("12h", 43_200), ("90s", 90), ("5m", 300)])
    func agesTakeAUnit(text: String, seconds: Int64) {
        #expect(AgeLimit(argument: text)?.value == .seconds(seconds))
        #expect(AgeLimit(argument: text)?.description == text)
    }

    @Test(arguments: ["", "30", "0d", "-1h", "1w"])
    func refusesAgesThatAreNone(text: String) {
        #expect(AgeLimit(argument: text) == nil)
    }

    @Test func theStateHelpGivesTheDefaultDirectoryOfTheBus() {
        // What `--help` says is the directory theDefaultStateDirectoryIsPerUserAndPerBus checks,
        // not its parent.
        for help in [IngestCommand.helpText, WorkerCommand.helpText] {
            #expect(help.contains("$XDG_STATE_HOME/kinesia/bus-NAME or ~/.local/state/kinesia/bus-NAME"))
            #expect(!help.contains("~/.local/state/kinesia)"))
        }
    }

    @Test func theDefaultStateDirectoryIsPerUserAndPerBus() throws {
        let options = JournalOptions()
        #expect(
            try options.stateDirectory(environment: ["HOME": "/home/pt"], bus: "/run/user/1000/kinesia")
                == "/home/pt/.local/state/kinesia/bus-_run_user_1000_kinesia")
        #expect(
            try options.stateDirectory(
                environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"], bus: "tcp://10.0.0.2:5555")
                == "/s/kinesia/bus-tcp___10.0.0.2_5555")
        var given = JournalOptions()
        given.state = "/var/lib/kinesia"
        #expect(try given.stateDirectory(environment: [:], bus: "x") == "/var/lib/kinesia")
        given.state = "relative"
        #expect(throws: CLIError.self) { try given.stateDirectory(environment: [:], bus: "x") }
        #expect(throws: CLIError.self) { try options.stateDirectory(environment: [:], bus: "x") }
    }

    @Test func aStateDirectoryOthersCanWriteIsRefused() throws {
        var template = Array("/tmp/kinesia-state.XXXXXX".utf8CString)
        #expect(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil })
        let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o777)
        var options = JournalOptions()
        options.state = directory
        let context = CommandContext(standardOutput: CapturedText(), standardError: CapturedText())
        #expect {
            try PublishJournal(options: options, environment: [:], bus: "b", log: context.logger)
        } throws: { error in
            guard case .failure(let message) = error as? CLIError else { return false }
            return message.contains(directory) && message.contains("0777")
        }
    }
}
