import KinesiaMotion
import Testing

@testable import KinesiaCLI
@testable import KinesiaWorker

struct WorkerSessionTests {
    @Test func aSessionWithoutCameraTakesTheDefaultCamera() throws {
        let session = try WorkerSession(parsing: "left=shoulderAbduction:left", defaultCamera: "cam0")
        #expect(
            session == WorkerSession(camera: "cam0", name: "left", exercise: .shoulderAbduction, side: .left))
    }

    @Test func aSessionMayNameItsCamera() throws {
        let session = try WorkerSession(parsing: "cam10/knee=kneeFlexion:right", defaultCamera: "cam0")
        #expect(session.camera == "cam10")
        #expect(session.name == "knee")
        #expect(session.exercise.id == "kneeFlexion")
        #expect(session.side == .right)
    }

    @Test func anUnknownExerciseNamesTheValidOnes() {
        #expect {
            try WorkerSession(parsing: "left=shoulderRaise:left", defaultCamera: "cam0")
        } throws: { error in
            guard case .usage(let message) = error as? CLIError else { return false }
            return message.contains("shoulderRaise") && message.contains("shoulderAbduction")
                && message.contains("wallSit")
        }
    }

    @Test func anUnknownSideNamesTheValidOnes() {
        #expect {
            try WorkerSession(parsing: "left=squat:middle", defaultCamera: "cam0")
        } throws: { error in
            guard case .usage(let message) = error as? CLIError else { return false }
            return message.contains("middle") && message.contains("left, right")
        }
    }

    @Test(arguments: ["left", "left=squat", "a/b/c=squat:left", "=squat:left", "cam 0/x=squat:left"])
    func malformedSessionsAreUsageErrors(_ text: String) {
        #expect(throws: CLIError.self) { try WorkerSession(parsing: text, defaultCamera: "cam0") }
    }

    @Test func aSessionNeedsACamera() {
        #expect(throws: CLIError.self) { try WorkerSession(parsing: "left=squat:left", defaultCamera: nil) }
    }

    @Test func aBadSessionExitsWithStatus64BeforeTouchingTheBus() async {
        let run = await CommandRun.run(["worker", "--camera", "cam0", "--session", "left=nope:left"])
        #expect(run.status == 64)
        #expect(run.error.contains("unknown exercise \"nope\""))
        #expect(run.error.contains("valid exercises: shoulderFlexion"))
    }

    @Test func theSameSessionTwiceIsRefused() async {
        let run = await CommandRun.run([
            "worker", "--camera", "cam0", "--session", "a=squat:left", "--session", "cam0/a=squat:right",
        ])
        #expect(run.status == 64)
        #expect(run.error.contains("cam0/a is given twice"))
    }
}

struct WorkerAnalyticsSessionTests {
    @Test func analyticsInPlaceOfASideAsksForBothSidesAnalytics() throws {
        let session = try WorkerSession(parsing: "cam0/analytics=squat:analytics", defaultCamera: nil)
        #expect(session.analysis == .analytics)
        #expect(session.side == nil)
        #expect(session.name == "analytics")
        #expect(session.analysisText == "squat:analytics")
    }

    @Test func anUnknownSideMentionsAnalytics() {
        #expect {
            try WorkerSession(parsing: "x=squat:both", defaultCamera: "cam0")
        } throws: { error in
            guard case .usage(let message) = error as? CLIError else { return false }
            return message.contains("analytics")
        }
    }
}
