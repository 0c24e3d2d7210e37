import Foundation
import KinesiaSupervisor
import KinesiaWire
import Testing

@testable import KinesiaCLI

/// One rule and one message for camera, session and process names (``Topic/isValidName(_:)``),
/// wherever a name is checked: command options and `kinesia up` topology files.
struct NameRuleTests {
    /// Names the rule refuses: reserved (only dots), empty, too long, bad characters.
    static let refused = [
        "..", ".", "...", "", String(repeating: "a", count: 65), "a b", "cam/0", "caméra", "a\u{0}b",
    ]

    /// A topology whose only process has `name`.
    static func topology(named name: String) -> String {
        let escaped = name.unicodeScalars.map {
            $0.value < 0x20 ? String(format: "\\u%04x", $0.value) : String($0)
        }
        .joined().replacingOccurrences(of: "/", with: "\\/")
        return #"{"processes": [{"name": "\#(escaped)", "command": ["broker"]}]}"#
    }

    @Test(arguments: refused)
    func topologyValidationRefusesTheNameWithTheMessageOfTheCommands(_ name: String) async throws {
        let error = #expect(throws: TopologyError.self) {
            try Topology.decode(Data(Self.topology(named: name).utf8), file: "t.json")
        }
        #expect(error?.field == "processes[0].name")
        // The command that takes the same name says the same words.
        let broker = await CommandRun.run([
            "broker", "--name", name, "--bus", "/nonexistent/kinesia-name-rule",
        ])
        #expect(broker.status == 64)
        let message = Topic.invalidNameMessage(name, role: "process name")
        #expect(error?.message == message)
        #expect(broker.error.contains(message), "\(broker.error)")
    }

    @Test(arguments: refused)
    func everyCameraOptionRefusesTheNameWithTheSameMessage(_ name: String) async {
        let message = Topic.invalidNameMessage(name, role: "camera")
        for command in [
            ["ingest", "--source", "sim:squat", "--camera", name], ["watch", "--camera", name],
            ["worker", "--camera", name, "--session", "left=squat:left"],
        ] {
            let run = await CommandRun.run(command)
            #expect(run.status == 64, "\(command): \(run.error)")
            #expect(run.error.contains(message), "\(command): \(run.error)")
        }
    }

    @Test func theRuleAcceptsWhatTheTopicsAccept() throws {
        for name in ["cam0", "a.b", "..a", "_", "-", String(repeating: "z", count: 64)] {
            #expect(Topic.isValidName(name))
            let topology = try Topology.decode(Data(Self.topology(named: name).utf8), file: "t.json")
            #expect(topology.processes.map(\.name) == [name])
            #expect(try Topic.health(process: name).string == "health/\(name)/")
        }
    }
}

/// Names a command makes from a name the user gave (`ingest-<camera>`) are always valid.
struct DerivedNameTests {
    @Test func aShortNameIsKeptAsItIs() {
        #expect(BusProcess.derivedName("ingest", "cam0") == "ingest-cam0")
        #expect(BusProcess.derivedName("worker", "4194304") == "worker-4194304")
    }

    @Test(arguments: [57, 58, 63, 64])
    func everyValidCameraNameGivesAValidNameOfAtMost64Bytes(length: Int) {
        let camera = String(repeating: "c", count: length - 1) + "."
        #expect(Topic.isValidName(camera))
        let name = BusProcess.derivedName("ingest", camera)
        #expect(Topic.isValidName(name), "\(name)")
        #expect(name.utf8.count <= Topic.maximumNameLength)
        #expect(name.hasPrefix("ingest-ccc"))
        #expect(BusProcess.derivedName("ingest", camera) == name, "not deterministic")
    }

    @Test func twoLongNamesThatShareTheirStartGiveTwoNames() {
        let first = BusProcess.derivedName("ingest", String(repeating: "c", count: 63) + "1")
        let second = BusProcess.derivedName("ingest", String(repeating: "c", count: 63) + "2")
        #expect(first != second)
        #expect(first.utf8.count == 64)
    }

    @Test func theDefaultProcessNameOfTheLongestCameraIsAccepted() throws {
        let camera = String(repeating: "c", count: 64)
        let name = try BusProcess.processName(
            nil, environment: [:], fallback: BusProcess.derivedName("ingest", camera))
        #expect(name.utf8.count == 64)
    }
}
