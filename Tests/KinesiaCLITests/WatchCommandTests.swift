import Foundation
import KinesiaCLI
import KinesiaMotion
import KinesiaWire
import Testing

struct WatchCommandTests {
    @Test func watchSubscribesToEverySessionAndProcessByDefault() throws {
        let command = try WatchCommand.parse([])
        #expect(command.prefixes.map(\.string) == ["snapshot/", "event/", "session/", "health/"])
    }

    @Test func cameraLimitsTheSessionsButNotTheProcesses() throws {
        let command = try WatchCommand.parse(["--camera", "cam1", "--camera", "cam10"])
        #expect(
            command.prefixes.map(\.string) == [
                "snapshot/cam1/", "event/cam1/", "session/cam1/", "snapshot/cam10/", "event/cam10/",
                "session/cam10/", "health/",
            ])
    }

    @Test(arguments: [
        ["watch", "--camera", "cam/0"], ["watch", "--idle", "0"], ["watch", "--duration", "-1"],
        ["watch", "--wait", "nan"], ["status", "--wait", "0"], ["demo", "--seconds", "0"],
        ["demo", "--seed", "-1"], ["demo", "--exercise", "juggling"],
    ])
    func invalidOptionsAreUsageErrors(arguments: [String]) async {
        let run = await CommandRun.run(arguments)
        #expect(run.status == 64)
        #expect(run.error.contains("USAGE: kinesia \(arguments[0])"))
    }

    @Test func helpListsWatchStatusAndDemo() async {
        let run = await CommandRun.run(["help"])
        for name in ["watch", "status", "demo"] {
            #expect(
                run.outputLines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + " ") })
        }
    }

    @Test func demoDefaultsToTwoPatientsOfShoulderAbductionForThirtyFiveSecondsFromSeedSeven() throws {
        let demo = try DemoCommand.parse([])
        #expect(demo.seconds == 35)
        #expect(demo.exercise.id == "shoulderAbduction")
        #expect(demo.seed == 7)
    }
}
