import Foundation
import Glibc
import KinesiaCLI
import KinesiaMotion
import KinesiaTestSupport
import Testing

/// A deployment over several boxes, on one machine: the broker, the ingest, the worker and the
/// consumer each on a "host" of its own (a network namespace, ``NamespaceNetwork``), talking over
/// TCP across veth pairs, with a packet capture on the broker's host of what an eavesdropper on
/// the network would see.
///
/// Needs root for `ip netns` (CI's `scripts/test` runs as root). Where it cannot run, every test
/// fails saying how to run it; `KINESIA_NAMESPACE_TESTS=skip` skips them on purpose.
///
/// Serialized: each test starts five to seven processes, and the machine has two cores.
@Suite(
    .serialized, .tags(.process),
    .disabled(if: NamespaceNetwork.skippedOnPurpose, "KINESIA_NAMESPACE_TESTS=skip: not run on purpose"))
struct NamespaceHostTests {
    /// The source both the ingest and the oracle (`kinesia analyze`) read.
    static let source = "sim:squat,seed=3,reps=3"
    static let port = 5555

    // MARK: - The harness

    @Test func tearDownKillsTheProcessesOfEveryHostAndDeletesItsNamespaces() async throws {
        guard let network = makeNetwork(hub: "broker", hosts: ["a", "b"]) else { return }
        let names = network.hosts.values.map(\.namespace)
        #expect(Set(NamespaceNetwork.existingNamespaces()).isSuperset(of: names))
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A process that would outlive the test: the teardown ends it.
        let launcher = network.launcher(for: "a")
        let sleeper = try TestProcess(
            executable: launcher[0], arguments: Array(launcher.dropFirst()) + ["/bin/sleep", "600"],
            environment: [:])
        #expect(await waitUntil(timeout: .seconds(5)) { !network.processes(on: "a").isEmpty })

        #expect(network.tearDown() == [])
        #expect(await sleeper.waitForExit(timeout: .seconds(5)) == 128 + SIGKILL)
        #expect(Set(NamespaceNetwork.existingNamespaces()).isDisjoint(with: names))
        #expect(network.tearDown() == [], "a second teardown is harmless")
    }

    @Test func aStaleNamespaceOfACrashedRunIsSweptWithItsProcesses() async throws {
        if let reason = NamespaceNetwork.unavailableReason {
            Issue.record(Comment(rawValue: reason))
            return
        }
        // The pid of a process that has exited: the owner of a run that crashed.
        let exited = try TestProcess(executable: "/bin/true", arguments: [], environment: [:])
        _ = exited.waitForExit()
        let stale = "\(NamespaceNetwork.prefix)\(exited.pid)-1-broker"
        let ip = FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip"
        #expect(try TestProcess.run(ip, ["netns", "add", stale], environment: [:]).status == 0)
        let orphan = try TestProcess(
            executable: ip, arguments: ["netns", "exec", stale, "/bin/sleep", "600"], environment: [:])
        // The namespace of a run that is still going (this one) is left alone.
        guard let live = makeNetwork(hub: "broker", hosts: []) else { return }
        defer { live.tearDown() }
        #expect(
            await waitUntil(timeout: .seconds(5)) {
                (try? TestProcess.run(ip, ["netns", "pids", stale], environment: [:]).output.isEmpty) == false
            })

        let swept = NamespaceNetwork.sweepStaleNamespaces()
        #expect(swept.contains(stale))
        #expect(!swept.contains(live.hub.namespace))
        #expect(await orphan.waitForExit(timeout: .seconds(5)) == 128 + SIGKILL)
        let remaining = NamespaceNetwork.existingNamespaces()
        #expect(!remaining.contains(stale))
        #expect(remaining.contains(live.hub.namespace))
    }

    @Test func theHostsReachTheBrokerAtAddressesThatExistOnlyInsideTheNamespaces() async throws {
        guard let network = makeNetwork(hub: "broker", hosts: ["ingest", "consumer"]) else { return }
        defer { network.tearDown() }
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let topology = try Topology(bus: "tcp://\(network.hubAddress):\(Self.port)")
        defer { topology.tearDown() }
        let broker = try topology.start("broker", ["broker"], launcher: network.launcher(for: "broker"))
        #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
        // From the consumer's host, the broker answers; from the test's own network namespace,
        // the address does not exist.
        let listener = try topology.start("listen", ["listen"], launcher: network.launcher(for: "consumer"))
        #expect(await listener.waitForError(containing: "listening to"), "\(listener.diagnostics)")
        #expect(network["consumer"].address == "10.77.0.3")
        #expect(!TestProcess.readFile("/proc/net/fib_trie").contains("10.77.0."))
    }

    // MARK: - Plain TCP: the control of the capture check

    @Test func plainTCPBetweenHostsCarriesTheEventsOfAnalyzeAndTheCaptureShowsEverything() async throws {
        guard let run = try await runDeployment(security: .plain) else { return }
        defer { run.tearDown() }
        #expect(run.received == run.expected, "\(run.topology.diagnostics)")
        // An eavesdropper on the broker's network reads it all: the check below can fail.
        let visible = run.capture.occurrences(of: Self.eventNames + Self.jointNames)
        #expect(
            Set(visible).isSuperset(of: ["repCompleted", "pose/cam0/", "event/cam0/left/"]), "\(visible)")
        #expect(visible.contains { Self.jointNames.contains($0) }, "\(visible)")
        let coordinates = try Self.coordinates()
        let seen = run.capture.occurrences(ofLittleEndian: coordinates)
        // Nearly all: a number split between two TCP segments is not seen whole.
        #expect(
            seen.count * 10 >= coordinates.count * 9, "\(seen.count) of \(coordinates.count) coordinates seen"
        )
    }

    // MARK: - Support

    /// Event names, topics and other words only the clear text has.
    static let eventNames = [
        "repCompleted", "repRejected", "formFault", "visibilityChanged", "setupChanged", "pose/cam0/",
        "event/cam0/left/", "snapshot/cam0/",
    ]
    /// Every joint's name, as events and snapshots write them.
    static let jointNames = Joint.allCases.map(\.rawValue)

    /// The x and y of every pose of ``source`` as the pose records carry them (Float64 bits),
    /// without the ones with three or more zero bytes (they could match headers by chance).
    static func coordinates() throws -> Set<UInt64> {
        var values: Set<UInt64> = []
        for pose in try PoseSource.load(source) {
            for point in pose.points.values {
                for bits in [Double(point.x).bitPattern, Double(point.y).bitPattern] {
                    let zeros = (0..<8).filter { (bits >> ($0 * 8)) & 0xFF == 0 }.count
                    if zeros < 3 { values.insert(bits) }
                }
            }
        }
        return values
    }

    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/kinesia-netns.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw POSIXError(.EIO) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A network, or `nil` after recording why it cannot be made here (a failure, never a pass).
    func makeNetwork(hub: String, hosts: [String]) -> NamespaceNetwork? {
        do {
            return try NamespaceNetwork(hub: hub, hosts: hosts)
        } catch {
            Issue.record(Comment(rawValue: error.description))
            return nil
        }
    }

    enum Security {
        /// No keys: TCP in clear text.
        case plain
    }

    /// One run of broker, worker, consumer and ingest on four hosts.
    final class DeploymentRun {
        let network: NamespaceNetwork
        let topology: Topology
        let capture: PacketCapture
        /// `kinesia analyze`'s events per event topic.
        let expected: [String: [String]]
        /// The consumer's events per event topic.
        let received: [String: [String]]

        init(
            network: NamespaceNetwork, topology: Topology, capture: PacketCapture,
            expected: [String: [String]],
            received: [String: [String]]
        ) {
            self.network = network
            self.topology = topology
            self.capture = capture
            self.expected = expected
            self.received = received
        }

        func tearDown() {
            topology.tearDown()
            network.tearDown()
        }
    }

    /// Runs the broker (with a capture on its host), a worker with a left and a right squat
    /// session, a consumer listening to poses, events and snapshots, and an ingest of
    /// ``source``, each on its own host, until the consumer has every event; then stops the
    /// capture.
    func runDeployment(security: Security) async throws -> DeploymentRun? {
        var expected: [String: [String]] = [:]
        for side in ["left", "right"] {
            expected["event/cam0/\(side)/"] = try await Oracle.events(
                source: Self.source, exercise: "squat", side: side)
        }
        #expect(expected.values.contains { $0.contains { $0.hasPrefix("{\"type\":\"repCompleted\"") } })
        let total = expected.values.map(\.count).reduce(0, +)

        guard let network = makeNetwork(hub: "broker", hosts: ["ingest", "worker", "consumer"]) else {
            return nil
        }
        let topology: Topology
        do {
            topology = try Topology(bus: "tcp://\(network.hubAddress):\(Self.port)")
        } catch {
            network.tearDown()
            throw error
        }
        var succeeded = false
        defer {
            if !succeeded {
                topology.tearDown()
                network.tearDown()
            }
        }
        let capture = try await PacketCapture.start(
            on: "broker", of: network, into: topology.directory + "/broker.pcap")

        let broker = try topology.start("broker", ["broker"], launcher: network.launcher(for: "broker"))
        #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
        // Poses, events and snapshots (health reports, every second, would keep it from idling).
        let listener = try topology.start(
            "listen", ["listen", "pose/", "event/", "snapshot/", "--format", "json"],
            launcher: network.launcher(for: "consumer"))
        #expect(await listener.waitForError(containing: "listening to"), "\(listener.diagnostics)")
        let worker = try topology.start(
            "worker",
            [
                "worker", "--name", "worker", "--camera", "cam0", "--session", "left=squat:left", "--session",
                "right=squat:right",
            ], launcher: network.launcher(for: "worker"))
        #expect(await worker.waitForError(containing: "hosting"), "\(worker.diagnostics)")
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", Self.source, "--pace", "max"],
            launcher: network.launcher(for: "ingest"))
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let events = {
            listener.outputLines.filter { $0.hasPrefix("{\"topic\":\"event/") }.count
        }
        #expect(
            await waitUntil(timeout: .seconds(30)) { events() >= total }, "\(topology.diagnostics)")
        // Nothing more on its way.
        _ = await listener.waitForIdleOutput(lines: 1, quiet: .seconds(1))
        #expect(await listener.stop() == 0, "\(listener.diagnostics)")
        await capture.stop()

        let received = ListenedLine.byTopic(listener.outputLines).filter { $0.key.hasPrefix("event/") }
        succeeded = true
        return DeploymentRun(
            network: network, topology: topology, capture: capture, expected: expected, received: received)
    }
}
