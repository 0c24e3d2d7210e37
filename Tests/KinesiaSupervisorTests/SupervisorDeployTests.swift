import Foundation
import KinesiaTestSupport
import Testing

@testable import KinesiaSupervisor

/// The files of `deploy/`: the systemd units and the example topology.
@Suite(.tags(.process))
struct SupervisorDeployTests {
    static let systemdDirectory = PackagePaths.url("deploy/systemd")

    static let unitNames = [
        "kinesia-broker.service", "kinesia-coordinator.service", "kinesia-ingest@.service",
        "kinesia-worker@.service", "kinesia-up.service", "kinesia.target", "kinesia-workers.target",
    ]

    /// What `systemd-analyze verify` is given: templates as one instance each.
    static let verifiedNames = [
        "kinesia-broker.service", "kinesia-coordinator.service", "kinesia-ingest@cam0.service",
        "kinesia-worker@sides.service", "kinesia-up.service", "kinesia.target", "kinesia-workers.target",
    ]

    static let systemdAnalyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `systemd-analyze`, or a failure saying what to install (never a skip).
    static func requireSystemdAnalyze() throws -> String {
        try #require(systemdAnalyze, "systemd-analyze is not installed: apt-get install systemd")
    }

    static func unit(_ name: String) throws -> String {
        try String(contentsOf: systemdDirectory.appendingPathComponent(name), encoding: .utf8)
    }

    /// Copies the units to a temporary directory, replacing the installed binary's path by
    /// `executable`, and runs `systemd-analyze verify` there: (status, output lines).
    static func verify(executable: String) throws -> (Int32, [String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-units-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in unitNames {
            let text = try unit(name).replacingOccurrences(of: "/usr/local/bin/kinesia", with: executable)
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }
        let (status, output) = try TestProcess.run(
            try requireSystemdAnalyze(),
            ["verify"] + verifiedNames.map { directory.appendingPathComponent($0).path },
            environment: ProcessInfo.processInfo.environment, workingDirectory: directory.path)
        return (status, output.split(separator: "\n").map(String.init))
    }

    @Test
    func theUnitsPassSystemdAnalyzeVerifyWithoutAnyComplaint() throws {
        // verify exits 0 even for unknown keys and bad values, so any output is a failure.
        let (status, lines) = try Self.verify(executable: "/bin/true")
        #expect(status == 0)
        #expect(lines == [])
    }

    /// Never skipped: the shipped path is replaced by one that cannot exist (so an installed
    /// `kinesia` changes nothing), then by the `kinesia` built with these tests.
    @Test
    func theUnitsAsShippedOnlyMissTheInstalledBinary() throws {
        let missing = "/nonexistent-\(UUID().uuidString.prefix(8))/kinesia"
        let (_, lines) = try Self.verify(executable: missing)
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(
                line.hasSuffix("Command \(missing) is not executable: No such file or directory"), "\(line)")
        }
        // The binary in place: nothing left to complain about.
        let (status, built) = try Self.verify(executable: PackagePaths.kinesia())
        #expect(status == 0)
        #expect(built == [])
    }

    @Test(arguments: [
        "kinesia-broker.service", "kinesia-coordinator.service", "kinesia-ingest@.service",
        "kinesia-worker@.service", "kinesia-up.service",
    ])
    func everyServiceRunsAsKinesiaWithAPrivateBusAndAGracefulStop(_ name: String) throws {
        let lines = Set(try Self.unit(name).split(separator: "\n").map(String.init))
        for required in [
            "User=kinesia", "RuntimeDirectory=kinesia", "RuntimeDirectoryMode=0700",
            "RuntimeDirectoryPreserve=yes",
            "Restart=on-failure", "KillSignal=SIGTERM", "NoNewPrivileges=yes", "ProtectSystem=strict",
            "UMask=0077",
        ] {
            #expect(lines.contains(required), "\(name) lacks \(required)")
        }
        #expect(lines.contains { $0.hasPrefix("TimeoutStopSec=") })
        #expect(lines.contains { $0.hasPrefix("ExecStart=/usr/local/bin/kinesia ") })
    }

    @Test(arguments: [
        "kinesia-broker.service", "kinesia-coordinator.service", "kinesia-ingest@.service",
        "kinesia-worker@.service", "kinesia-up.service",
    ])
    func everyServiceBoundsItsFileDescriptorsAndItsMemory(_ name: String) throws {
        let lines = try Self.unit(name).split(separator: "\n").map(String.init)
        func value(_ key: String) -> String? {
            lines.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        let descriptors = try #require(value("LimitNOFILE").flatMap(Int.init), "\(name) lacks LimitNOFILE")
        #expect((1024...65536).contains(descriptors))
        let memory = try #require(value("MemoryMax"), "\(name) lacks MemoryMax")
        #expect(memory.hasSuffix("G") || memory.hasSuffix("M"), "\(name): MemoryMax=\(memory)")
        if name == "kinesia-broker.service" {
            // One descriptor per connection: room for many more than the default 1,024.
            #expect(descriptors >= 8192)
        }
    }

    @Test func ingestsStopBeforeWorkersAndWorkersBeforeTheBroker() throws {
        // systemd stops in the reverse of the start order.
        let ingest = try Self.unit("kinesia-ingest@.service")
        let worker = try Self.unit("kinesia-worker@.service")
        #expect(ingest.contains("After=kinesia-broker.service kinesia-workers.target"))
        #expect(worker.contains("After=kinesia-broker.service"))
        #expect(worker.contains("Before=kinesia-workers.target"))
    }

    @Test func theUpUnitWaitsLongEnoughForEveryDrainStage() throws {
        let unit = try Self.unit("kinesia-up.service")
        let timeout = unit.split(separator: "\n").first { $0.hasPrefix("TimeoutStopSec=") }.flatMap {
            Int($0.dropFirst("TimeoutStopSec=".count))
        }
        let topology = try Topology.load(
            contentsOf: PackagePaths.url("deploy/local.json"))
        let stages = Int64(ProcessRole.drainOrder.count)
        #expect(Int64(timeout ?? 0) > topology.shutdown.deadline.components.seconds * stages)
        #expect(unit.contains("KillMode=mixed"))
    }
}
