import Foundation
import KinesiaVoice
import KinesiaWire
import Testing

@testable import KinesiaCLI
@testable import KinesiaCueConsumers

/// Which sessions `kinesia voice` follows, parsed directly (no I/O).
struct VoiceCommandTests {
    @Test func repeatedSessionsAreFollowedTogetherAndNameTheirSides() throws {
        let command = try VoiceCommand.parse(["--camera", "cam0", "--session", "left", "--session", "right"])
        try command.validate()
        #expect(command.following == .sessions(["left", "right"]))
        let target = command.options.target
        #expect(target.description == "sessions cam0/left and cam0/right")
        #expect(
            try target.topics().map(\.description) == [
                "health/", "event/cam0/left/", "snapshot/cam0/left/", "session/cam0/left/",
                "event/cam0/right/", "snapshot/cam0/right/", "session/cam0/right/",
            ])
        #expect(VoiceCuePlanner(texts: try .builtIn(.english), following: command.following).namesSides)
    }

    @Test func oneSessionNamesNoSideAndNoneFollowsTheWholeCamera() throws {
        let one = try VoiceCommand.parse(["--camera", "cam0", "--session", "left", "--session", "left"])
        #expect(one.following == .sessions(["left"]) && one.options.target.sessions == ["left"])
        #expect(one.options.target.description == "session cam0/left")
        #expect(!VoiceCuePlanner(texts: try .builtIn(.english), following: one.following).namesSides)
        let camera = try VoiceCommand.parse(["--camera", "cam0"])
        #expect(camera.following == .camera)
        #expect(
            try camera.options.target.topics().map(\.description) == [
                "event/cam0/", "snapshot/cam0/", "session/cam0/", "health/",
            ])
    }

    @Test func aBadSessionNameIsAUsageError() throws {
        let command = try VoiceCommand.parse(["--camera", "cam0", "--session", "left", "--session", "a/b"])
        #expect(throws: CLIError.self) { try command.validate() }
        #expect(VoiceCommand.helpText.contains("repeat for several"))
    }

    @Test func twoSoundOutputsHaveTwoLockFilesAndOneOutputHasOne() {
        let environment = ["XDG_RUNTIME_DIR": NSTemporaryDirectory()]
        let earpiece = OutputTurn.path(
            forOutput: "paplay:/run/pulse/native#earpiece-a", environment: environment)
        #expect(
            earpiece
                == OutputTurn.path(forOutput: "paplay:/run/pulse/native#earpiece-a", environment: environment)
        )
        #expect(
            earpiece
                != OutputTurn.path(forOutput: "paplay:/run/pulse/native#earpiece-b", environment: environment)
        )
        #expect(earpiece.hasSuffix(".lock") && earpiece.contains("kinesia-voice-output-\(getuid())-"))
        let player = try? AudioPlayer.find(
            environment: [
                "PULSE_SERVER": "unix:/tmp/x", "PULSE_SINK": "earpiece-a", "PATH": "/usr/bin:/bin",
            ],
            soundDevices: "/nonexistent")
        if let player { #expect(player.output == "paplay:unix:/tmp/x#earpiece-a") }
    }
}

/// The turns of one sound output, between two holders of its lock file (two voices).
struct OutputTurnTests {
    func lockFile() -> String {
        NSTemporaryDirectory() + "kinesia-turn-test-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).lock"
    }

    @Test func aVoiceWaitsWhileTheOtherSpeaksAndGivesUpAtItsDeadline() throws {
        let path = lockFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let patient = try OutputTurn(path: path, pause: .zero)
        let therapist = try OutputTurn(path: path, pause: .zero)
        let clock = ContinuousClock()
        let start = clock.now
        let spoken = try patient.take(within: .seconds(1)) { () -> Bool? in
            // While the patient's utterance plays, the therapist's turn does not come.
            try therapist.take(within: .milliseconds(200)) { true }
        }
        #expect(spoken == .some(nil))
        #expect(clock.now - start >= .milliseconds(200))
        // Once it has ended, it does.
        #expect(try therapist.take(within: .zero) { "said" } == "said")
    }

    @Test func aVoiceThatHadItsTurnLetsThePauseGoByBeforeAskingAgain() throws {
        let path = lockFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let turn = try OutputTurn(path: path, pause: .milliseconds(150))
        let clock = ContinuousClock()
        let start = clock.now
        _ = try turn.take(within: .zero) {}
        #expect(clock.now - start >= .milliseconds(150))
    }
}
