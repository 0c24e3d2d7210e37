import Foundation
import Glibc
import KinesiaControl
import KinesiaMotion
import KinesiaService
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaCLI
@testable import KinesiaWorker

/// Exercise files: a catalog exercise with changed thresholds, read strictly.
struct ExerciseFileTests {
    private func parse(_ text: String) throws(ExerciseFileError) -> Exercise {
        try ExerciseFile.parse(Array(text.utf8), file: "deep.json")
    }

    /// The failure message of `text`.
    private func failure(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.message
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

/// The journal options' help.
struct JournalOptionsHelpTests {
    @Test func theStateHelpGivesTheDefaultDirectoryOfTheBus() {
        // What `--help` says is the directory theDefaultStateDirectoryIsPerUserAndPerBus checks,
        // not its parent.
        for help in [IngestCommand.helpText, WorkerCommand.helpText] {
            #expect(help.contains("$XDG_STATE_HOME/kinesia/bus-NAME or ~/.local/state/kinesia/bus-NAME"))
            #expect(!help.contains("~/.local/state/kinesia)"))
        }
    }
}
