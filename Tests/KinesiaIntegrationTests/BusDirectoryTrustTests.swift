import Foundation
import Glibc
import KinesiaBus
import KinesiaTestSupport
import Testing

/// The bus directory as an attacker or an unlucky operator leaves it: a planted link, a loose
/// or foreign directory, a removed lock file, a socket file replaced under a running broker;
/// and names derived from the longest valid camera name.
@Suite(.serialized, .tags(.process))
struct BusDirectoryTrustTests {
    /// A file with `text`, and a directory for the bus with `mode` (set after `mkdir`, so the
    /// umask does not matter) whose `broker.lock` is a link to that file.
    static func plantedLink(in topology: Topology, mode: mode_t) -> (bus: String, victim: String) {
        let victim = topology.directory + "/victim"
        #expect(FileManager.default.createFile(atPath: victim, contents: Data("precious\n".utf8)))
        let bus = topology.directory + "/kinesia-0"
        #expect(mkdir(bus, 0o700) == 0)
        #expect(chmod(bus, mode) == 0)
        #expect(symlink(victim, bus + "/broker.lock") == 0)
        return (bus, victim)
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        #expect(lstat(path, &info) == 0)
        return info.st_mode & 0o7777
    }

    @Test func aBrokerRefusesALooseDirectoryWithAPlantedLinkAndChangesNothing() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let (bus, victim) = Self.plantedLink(in: topology, mode: 0o777)
        let broker = try topology.start("broker", ["broker", "--bus", bus], addingBus: false)
        let status = await broker.waitForExit(timeout: .seconds(60))
        #expect(status == 1, "\(broker.diagnostics)")
        #expect(broker.errorText.contains("cannot use bus directory \(bus)"), "\(broker.diagnostics)")
        #expect(broker.errorText.contains("mode 0777"), "\(broker.diagnostics)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(Self.mode(bus) == 0o777, "the broker changed a directory it did not make")
    }

    @Test func aPlantedLinkInAPrivateDirectoryIsNeverFollowed() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let (bus, victim) = Self.plantedLink(in: topology, mode: 0o700)
        let broker = try topology.start("broker", ["broker", "--bus", bus], addingBus: false)
        #expect(await broker.waitForExit(timeout: .seconds(60)) == 1, "\(broker.diagnostics)")
        #expect(broker.errorText.contains("\(bus)/broker.lock is a symbolic link"), "\(broker.diagnostics)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }

    /// Needs root: only root can give a directory to another user (uid 65534, `nobody`), the
    /// issue's attack (root's broker in a directory that `nobody` made and planted).
    @Test(.enabled(if: geteuid() == 0, "needs root to chown a directory to another user"))
    func rootRefusesADirectoryOfAnotherUser() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        #expect(chmod(topology.directory, 0o755) == 0)
        let (bus, victim) = Self.plantedLink(in: topology, mode: 0o777)
        #expect(lchown(bus + "/broker.lock", 65534, 65534) == 0)
        #expect(chown(bus, 65534, 65534) == 0)
        for command in [["broker"], ["status", "--wait", "0.5"]] {
            let process = try topology.start(command[0], command + ["--bus", bus], addingBus: false)
            #expect(await process.waitForExit(timeout: .seconds(60)) == 1, "\(process.diagnostics)")
            #expect(
                process.errorText.contains("is owned by uid 65534, not by uid 0"), "\(process.diagnostics)")
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(Self.mode(bus) == 0o777)
    }

    @Test func statusRefusesAnExistingLooseDirectoryAndLeavesItsMode() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let bus = topology.directory + "/shared"
        #expect(mkdir(bus, 0o700) == 0)
        #expect(chmod(bus, 0o1777) == 0)
        let run = try topology.start("status", ["status", "--bus", bus, "--wait", "0.5"], addingBus: false)
        #expect(await run.waitForExit(timeout: .seconds(60)) == 1)
        #expect(run.errorText.contains("cannot use bus directory \(bus)"), "\(run.diagnostics)")
        #expect(run.errorText.contains("mode 01777"), "\(run.diagnostics)")
        #expect(Self.mode(bus) == 0o1777, "status changed the mode of an existing directory")
    }

    @Test func aSecondBrokerIsRefusedEvenAfterTheLockFileIsRemoved() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let first = try await topology.startBroker("first")
        let socket = topology.bus + "/sub.sock"
        let before = try #require(
            try? FileManager.default.attributesOfItem(atPath: socket)[.systemFileNumber] as? Int)
        #expect(unlink(topology.bus + "/broker.lock") == 0)

        let second = try topology.start("second", ["broker"])
        #expect(await second.waitForExit(timeout: .seconds(60)) == 1, "\(second.diagnostics)")
        #expect(
            second.errorText.contains("another broker already serves \(topology.bus)"),
            "\(second.diagnostics)")
        #expect(first.isRunning)
        let after = try? FileManager.default.attributesOfItem(atPath: socket)[.systemFileNumber] as? Int
        #expect(after == before, "the first broker's socket file was taken over")
        // The first broker still answers on its bus.
        let status = try topology.start("status", ["status", "--wait", "1.5"])
        #expect(await status.waitForExit() == 0, "\(status.diagnostics)")
        #expect(status.outputLines.contains { $0.hasPrefix("broker ") }, "\(status.diagnostics)")
        #expect(await first.stop() == 0)
    }

    @Test func aBrokerStopRemovesItsOwnSocketFilesButNeverAnother() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        // Another socket takes the name sub.sock (as a second broker's bind would).
        #expect(unlink(topology.bus + "/sub.sock") == 0)
        let context = try ZMQContext()
        let other = try ZMQSocket(.xpub, context: context)
        defer {
            other.close()
            context.terminate()
        }
        try other.bindRestricted("ipc://\(topology.bus)/sub.sock")
        let theirs = try FileManager.default.attributesOfItem(atPath: topology.bus + "/sub.sock")[
            .systemFileNumber]

        #expect(await broker.stop() == 0, "\(broker.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: topology.bus + "/pub.sock"), "its own file stays")
        let left = try? FileManager.default.attributesOfItem(atPath: topology.bus + "/sub.sock")[
            .systemFileNumber]
        #expect(left as? Int == theirs as? Int, "the broker removed a socket file that was not its own")
    }

    /// The longest valid camera name (64 bytes): `ingest-<camera>` would be 71, so the derived
    /// name is cut and hashed, never refused.
    @Test func theLongestValidCameraNameGivesAValidDerivedProcessName() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let camera = String(repeating: "c", count: 64)
        _ = try await topology.startBroker()
        let worker = try topology.start(
            "worker", ["worker", "--camera", camera, "--session", "s=shoulderAbduction:left"])
        #expect(await worker.waitForError(containing: "hosting"), "\(worker.diagnostics)")
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", camera, "--source", "sim:squat,seed=3,reps=1", "--pace", "max",
                "--wait-seconds", "5",
            ])
        #expect(await ingest.waitForExit(timeout: .seconds(30)) == 0, "\(ingest.diagnostics)")
        #expect(!ingest.errorText.contains("invalid"), "\(ingest.diagnostics)")
        #expect(worker.isRunning, "\(worker.diagnostics)")
    }
}
