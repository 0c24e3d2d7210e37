import Foundation
import Glibc
import KinesiaCLI
import KinesiaIngest
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

    // MARK: - The harness

    @Test func tearDownKillsTheProcessesOfEveryHostAndDeletesItsNamespaces() async throws {
        guard let network = makeNetwork(hub: "broker", hosts: ["a", "b"]) else { return }
        let names = network.hosts.values.map(\.namespace)
        #expect(Set(NamespaceNetwork.existingNamespaces()).isSuperset(of: names))
        // A process that would outlive the test: the teardown ends it.
        let launcher = network.launcher(for: "a")
        let sleeper = try TestProcess(
            executable: launcher[0], arguments: Array(launcher.dropFirst()) + ["/bin/sleep", "600"],
            environment: [:])
        #expect(await waitUntil(timeout: .seconds(60)) { !network.processes(on: "a").isEmpty })

        #expect(network.tearDown() == [])
        #expect(await sleeper.waitForExit(timeout: .seconds(60)) == 128 + SIGKILL)
        #expect(Set(NamespaceNetwork.existingNamespaces()).isDisjoint(with: names))
        #expect(network.tearDown() == [], "a second teardown is harmless")
    }

    @Test func aStaleNamespaceOfACrashedRunIsSweptWithItsProcesses() async throws {
        if let reason = NamespaceNetwork.unavailableReason {
            Issue.record(Comment(rawValue: NamespaceNetwork.Failure(message: reason).description))
            return
        }
        // The pid of a process that has exited: the owner of a run that crashed.
        let exited = try TestProcess(executable: "/bin/true", arguments: [], environment: [:])
        _ = exited.waitForExit()
        let stale = "\(NamespaceNetwork.prefix)\(exited.pid)-1-broker"
        let ip = try #require(NamespaceNetwork.ip)
        #expect(try TestProcess.run(ip, ["netns", "add", stale], environment: [:]).status == 0)
        let orphan = try TestProcess(
            executable: ip, arguments: ["netns", "exec", stale, "/bin/sleep", "600"], environment: [:])
        // The namespace of a run that is still going (this one) is left alone.
        guard let live = makeNetwork(hub: "broker", hosts: []) else { return }
        defer { live.tearDown() }
        #expect(
            await waitUntil(timeout: .seconds(60)) {
                (try? TestProcess.run(ip, ["netns", "pids", stale], environment: [:]).output.isEmpty) == false
            })

        let swept = NamespaceNetwork.sweepStaleNamespaces()
        #expect(swept.contains(stale))
        #expect(!swept.contains(live.hub.namespace))
        #expect(await orphan.waitForExit(timeout: .seconds(60)) == 128 + SIGKILL)
        let remaining = NamespaceNetwork.existingNamespaces()
        #expect(!remaining.contains(stale))
        #expect(remaining.contains(live.hub.namespace))
    }

    @Test func theHostsReachTheBrokerAtAddressesThatExistOnlyInsideTheNamespaces() async throws {
        guard let network = makeNetwork(hub: "broker", hosts: ["ingest", "consumer"]) else { return }
        defer { network.tearDown() }
        let topology = try Topology(bus: "tcp://\(network.hubAddress):\(HostDeployment.port)")
        defer { topology.tearDown() }
        let broker = try topology.start(
            "broker", ["broker", "--insecure"], launcher: network.launcher(for: "broker"))
        #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
        // From the consumer's host, the broker answers; from the test's own network namespace,
        // the address does not exist.
        let listener = try topology.start(
            "listen", ["listen", "--insecure"], launcher: network.launcher(for: "consumer"))
        #expect(await listener.waitForError(containing: "listening to"), "\(listener.diagnostics)")
        #expect(network["consumer"].address == "10.77.0.3")
        #expect(!TestProcess.readFile("/proc/net/fib_trie").contains("10.77.0."))
    }

    // MARK: - The deployment: same events as analyze, nothing readable on the wire

    @Test func plainTCPBetweenHostsCarriesTheEventsOfAnalyzeAndTheCaptureShowsEverything() async throws {
        guard let deployment = try await HostDeployment.make(security: .insecure) else { return }
        defer { deployment.tearDown() }
        let capture = try await deployment.capture()
        let run = try await deployment.runPipeline()
        await capture.stop()
        #expect(run.received == run.expected, "\(deployment.diagnostics)")
        // The control of the check below: an eavesdropper on the broker's network reads it all.
        let visible = capture.occurrences(of: Self.eventNames + Self.jointNames)
        #expect(
            Set(visible).isSuperset(of: ["repCompleted", "pose/cam0/", "event/cam0/left/"]), "\(visible)")
        #expect(visible.contains { Self.jointNames.contains($0) }, "\(visible)")
        let coordinates = try Self.coordinates()
        let seen = capture.occurrences(ofLittleEndian: coordinates)
        // Nearly all: a number split between two TCP segments is not seen whole.
        #expect(
            seen.count * 10 >= coordinates.count * 9, "\(seen.count) of \(coordinates.count) coordinates seen"
        )
        #expect(deployment.brokerCounter("insecure") == 1)
        // On a bus run --insecure the worker serves replay on a port of its own, in clear text
        // like the rest (the control of the CURVE test's check).
        #expect(!(try deployment.listeningTCPSockets(on: "worker")).isEmpty)
    }

    @Test func curveBetweenHostsCarriesTheEventsOfAnalyzeAndTheCaptureShowsNothing() async throws {
        guard let deployment = try await HostDeployment.make(security: .curve) else { return }
        defer { deployment.tearDown() }
        let capture = try await deployment.capture()
        let run = try await deployment.runPipeline()
        await capture.stop()
        #expect(run.received == run.expected, "\(deployment.diagnostics)")
        // The same traffic went through (as much as in clear text, and more), and none of it
        // can be read.
        #expect(capture.bytes.count > 500_000, "capture of \(capture.bytes.count) bytes")
        #expect(capture.occurrences(of: Self.eventNames + Self.jointNames) == [])
        let coordinates = try Self.coordinates()
        #expect(capture.occurrences(ofLittleEndian: coordinates).isEmpty)
        #expect(deployment.brokerCounter("insecure") == nil)
        #expect((deployment.brokerCounter("admitted.ingest") ?? 0) >= 1, "\(deployment.diagnostics)")
        // No port outside the broker's authentication: the worker serves replay through the
        // broker's replay port (a connection it makes), never on a port of its own.
        #expect(try deployment.listeningTCPSockets(on: "worker") == [], "\(deployment.diagnostics)")
    }

    /// A consumer on another host that starts after the last event gets every event by replay,
    /// through the broker's replay port (CURVE, the broker's rights): the worker still listens on
    /// no port, and the capture shows nothing of what was replayed.
    @Test func aLateConsumerOnAnotherHostReplaysEveryEventThroughTheBrokerOverCURVE() async throws {
        guard let deployment = try await HostDeployment.make(security: .curve) else { return }
        defer { deployment.tearDown() }
        let capture = try await deployment.capture()
        let run = try await deployment.runPipeline()
        #expect(run.received == run.expected, "\(deployment.diagnostics)")
        let total = run.expected.values.map(\.count).reduce(0, +)
        let late = try deployment.start(
            "late", on: "consumer", ["listen", "event/", "--from", "beginning", "--format", "json"],
            key: "ward")
        #expect(await late.waitForError(containing: "listening to"), "\(late.diagnostics)")
        #expect(await late.waitForIdleOutput(lines: total, quiet: .seconds(3)), "\(deployment.diagnostics)")
        #expect(await late.stop() == 0, "\(late.diagnostics)")
        await capture.stop()
        #expect(ListenedLine.byTopic(late.outputLines) == run.expected, "\(deployment.diagnostics)")
        #expect(!late.errorText.contains("cannot be had"), "\(late.diagnostics)")
        #expect(
            await waitUntil(timeout: .seconds(60)) {
                (deployment.brokerCounter("replay.entries") ?? 0) >= total
            },
            "\(deployment.diagnostics)")
        #expect(deployment.brokerCounter("replay.refused.notAllowed") == 0)
        #expect(capture.occurrences(of: Self.eventNames + Self.jointNames) == [])
        #expect(try deployment.listeningTCPSockets(on: "worker") == [], "\(deployment.diagnostics)")
    }

    // MARK: - Who is refused

    @Test func anUnknownKeyIsRefusedAtTheHandshakeAndGetsNothing() async throws {
        guard let deployment = try await HostDeployment.make(security: .curve, extraHosts: ["intruder"])
        else {
            return
        }
        defer { deployment.tearDown() }
        // A consumer key like the ward's, made the same way, that the broker was never given.
        try await deployment.makeKey("stranger", role: "consumer", allowed: false)
        let intruder = try deployment.start(
            "intruder", on: "intruder", ["listen", "--format", "json"], key: "stranger")
        let run = try await deployment.runPipeline()
        #expect(run.received == run.expected, "\(deployment.diagnostics)")
        #expect(
            await waitUntil(timeout: .seconds(60)) {
                (deployment.brokerCounter("refused.unknownKey") ?? 0) >= 1
            },
            "\(deployment.diagnostics)")
        #expect(intruder.isRunning, "it keeps trying: \(intruder.diagnostics)")
        #expect(intruder.output == "", "the unknown key received messages")
        #expect(deployment.brokerCounter("admitted.consumer") ?? 0 >= 1)
    }

    @Test func aClientWithTheServerKeyButNoClientKeyGetsNothing() async throws {
        guard let deployment = try await HostDeployment.make(security: .curve, extraHosts: ["intruder"])
        else {
            return
        }
        defer { deployment.tearDown() }
        // kinesia itself refuses to start without a key of its own.
        let refused = try deployment.start(
            "listen-no-key", on: "intruder",
            ["listen", "--server-key", deployment.publicKey("broker"), "--format", "json"], key: nil)
        #expect(await refused.waitForExit() == 1)
        #expect(refused.errorText.contains("--key"), "\(refused.diagnostics)")
        // A ZeroMQ client that knows the broker's public key but has no key pair of its own.
        let script = deployment.directory + "/no-client-key.py"
        try Self.noClientKeySubscriber.write(toFile: script, atomically: true, encoding: .utf8)
        // The clone's Python, with pyzmq (scripts/setup), as PythonExampleTests.
        let interpreter = try PackagePaths.python()
        let launcher = deployment.network.launcher(for: "intruder")
        let python = try TestProcess(
            executable: launcher[0],
            arguments: Array(launcher.dropFirst()) + [
                interpreter, script, "tcp://\(deployment.network.hubAddress):\(HostDeployment.port + 1)",
                try deployment.serverKey(),
            ],
            environment: ProcessInfo.processInfo.environment,
            standardOutput: deployment.directory + "/no-client-key.out",
            standardError: deployment.directory + "/no-client-key.out")
        let output = { TestProcess.readFile(deployment.directory + "/no-client-key.out") }
        #expect(await waitUntil(timeout: .seconds(60)) { output().contains("subscribed") }, "\(output())")
        // Nor does a kinesia client without any key (the NULL mechanism, --insecure).
        let plain = try deployment.start(
            "listen-insecure", on: "intruder", ["listen", "--format", "json"], flags: ["--insecure"])
        let run = try await deployment.runPipeline()
        #expect(run.received == run.expected, "\(deployment.diagnostics)")
        python.send(SIGTERM)
        // It stops on SIGTERM (through `ip netns exec` and `timeout`, whose own status may vary
        // with who gets the signal first); what matters is what it printed: nothing received.
        #expect(await python.waitForExit(timeout: .seconds(60)) != nil, "\(output())")
        #expect(output().contains("received 0 messages"), "\(output())")
        #expect(plain.isRunning, "\(plain.diagnostics)")
        #expect(plain.output == "", "a client without keys received messages")
        // The broker refused both at the handshake (and again at each of their retries).
        #expect((deployment.brokerCounter("refused.handshake") ?? 0) >= 2, "\(deployment.diagnostics)")
    }

    @Test func aConsumersKeyCannotPublishEvents() async throws {
        guard let deployment = try await HostDeployment.make(security: .curve, extraHosts: ["rogue"]) else {
            return
        }
        defer { deployment.tearDown() }
        // The ward's consumer key, its role edited to worker in the key file: the broker goes by
        // the directory it allowed the key in, never by what the client says.
        try deployment.forgeKey("ward-as-worker", from: "ward", role: "worker")
        let rogue = try deployment.start(
            "rogue", on: "rogue",
            ["worker", "--name", "rogue", "--camera", "cam0", "--session", "left=squat:left"],
            key: "ward-as-worker")
        #expect(await rogue.waitForError(containing: "hosting"), "\(rogue.diagnostics)")
        let listener = try await deployment.startListener(["event/", "snapshot/"])
        let ingest = try deployment.startIngest()
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        #expect(
            await waitUntil(timeout: .seconds(60)) {
                (deployment.brokerCounter("dropped.consumer.event") ?? 0) >= 1
                    && (deployment.brokerCounter("dropped.consumer.snapshot") ?? 0) >= 1
            }, "\(deployment.diagnostics)")
        #expect(rogue.isRunning, "\(rogue.diagnostics)")
        #expect(listener.output == "", "events of a consumer's key arrived")
    }

    @Test func aWorkersKeyCannotPublishPoses() async throws {
        guard let deployment = try await HostDeployment.make(security: .curve, extraHosts: ["rogue"]) else {
            return
        }
        defer { deployment.tearDown() }
        try deployment.forgeKey("worker-as-ingest", from: "worker", role: "ingest")
        let listener = try await deployment.startListener(["pose/", "event/"])
        let worker = try await deployment.startWorker()
        let rogue = try deployment.start(
            "rogue", on: "rogue", ["ingest", "--camera", "cam0", "--source", Self.source, "--pace", "max"],
            key: "worker-as-ingest")
        #expect(await rogue.waitForExit(timeout: .seconds(60)) == 0, "\(rogue.diagnostics)")
        #expect(
            await waitUntil(timeout: .seconds(60)) {
                (deployment.brokerCounter("dropped.worker.pose") ?? 0) >= 1
            },
            "\(deployment.diagnostics)")
        #expect(worker.isRunning)
        #expect(listener.output == "", "poses of a worker's key arrived")
    }

    // MARK: - Support

    /// Subscribes with the broker's public key (`argv[2]`) and no key pair of its own, prints
    /// `subscribed`, then counts what it receives until SIGTERM.
    static let noClientKeySubscriber = """
        import signal, sys, zmq
        context = zmq.Context()
        socket = context.socket(zmq.SUB)
        socket.curve_serverkey = sys.argv[2].encode()
        socket.setsockopt(zmq.SUBSCRIBE, b"")
        socket.connect(sys.argv[1])
        print("subscribed", flush=True)
        received = 0
        stopping = []
        signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
        while not stopping:
            if socket.poll(100):
                socket.recv_multipart()
                received += 1
        print(f"received {received} messages", flush=True)
        socket.close(0)
        context.term()

        """

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

    /// A network, or `nil` after recording why it cannot be made here (a failure, never a pass).
    func makeNetwork(hub: String, hosts: [String]) -> NamespaceNetwork? {
        do {
            return try NamespaceNetwork(hub: hub, hosts: hosts)
        } catch {
            Issue.record(Comment(rawValue: error.description))
            return nil
        }
    }

}

/// Broker, worker, consumer and ingest of one camera on hosts of their own (a
/// ``NamespaceNetwork``), over TCP, with CURVE keys or `--insecure`; a consumer on the consumer's
/// host also listens to the broker's health.
final class HostDeployment {
    enum Security {
        /// `--insecure` on every command.
        case insecure
        /// A key for each process; the broker allows them all.
        case curve
    }

    static let port = 5555

    let network: NamespaceNetwork
    let topology: Topology
    let security: Security
    /// The broker's health reports (`health/broker/`), read on the consumer's host.
    private(set) var health: KinesiaProcess?

    var directory: String { topology.directory }
    var keys: String { topology.directory + "/keys" }

    private init(network: NamespaceNetwork, topology: Topology, security: Security) {
        self.network = network
        self.topology = topology
        self.security = security
    }

    /// The hosts `broker` (the hub), `ingest`, `worker`, `consumer` and `extraHosts`; with
    /// CURVE, the keys `broker`, `cam0` (ingest), `worker` and `ward` (consumer), all allowed;
    /// the broker started, and its health listener. `nil` after recording why the network
    /// cannot be made here.
    static func make(security: Security, extraHosts: [String] = []) async throws -> HostDeployment? {
        let network: NamespaceNetwork
        do {
            network = try NamespaceNetwork(
                hub: "broker", hosts: ["ingest", "worker", "consumer"] + extraHosts)
        } catch {
            Issue.record(Comment(rawValue: error.description))
            return nil
        }
        let topology: Topology
        do {
            topology = try Topology(bus: "tcp://\(network.hubAddress):\(port)")
        } catch {
            network.tearDown()
            throw error
        }
        let deployment = HostDeployment(network: network, topology: topology, security: security)
        do {
            if security == .curve {
                try await deployment.makeKey("broker", role: "broker", allowed: false)
                try await deployment.makeKey("cam0", role: "ingest")
                try await deployment.makeKey("worker", role: "worker")
                try await deployment.makeKey("ward", role: "consumer")
            }
            let broker = try deployment.start(
                "broker", on: "broker", ["broker"],
                flags: security == .curve
                    ? ["--key", deployment.secretKey("broker"), "--allowed", deployment.keys + "/allowed"]
                    : ["--insecure"])
            #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
            let health = try deployment.start(
                "health", on: "consumer", ["listen", "health/broker/", "--format", "json"], key: "ward")
            #expect(await health.waitForError(containing: "listening to"), "\(health.diagnostics)")
            deployment.health = health
        } catch {
            deployment.tearDown()
            throw error
        }
        return deployment
    }

    func secretKey(_ name: String) -> String { keys + "/\(name).key" }
    func publicKey(_ name: String) -> String { keys + "/\(name).pub" }

    /// The broker's public key (Z85) from `broker.pub`.
    func serverKey() throws -> String {
        let text = try String(contentsOfFile: publicKey("broker"), encoding: .utf8)
        guard let match = text.firstMatch(of: /public-key = (\S{40})/) else { throw POSIXError(.EINVAL) }
        return String(match.1)
    }

    /// `kinesia keys new NAME --role ROLE`, then `kinesia keys allow NAME.pub` unless `allowed`
    /// is false (the broker's allowed directory is `keys/allowed`).
    func makeKey(_ name: String, role: String, allowed: Bool = true) async throws {
        var commands = [["keys", "new", name, "--role", role, "--dir", keys]]
        if allowed { commands.append(["keys", "allow", publicKey(name), "--dir", keys]) }
        for (index, arguments) in commands.enumerated() {
            let process = try topology.start("keys-\(name)-\(index)", arguments, addingBus: false)
            #expect(await process.waitForExit() == 0, "\(process.diagnostics)")
        }
    }

    /// A secret key file `NAME.key` with the key pair of `original` and another role: what a
    /// client that lies about its role would use.
    func forgeKey(_ name: String, from original: String, role: String) throws {
        let text = try String(contentsOfFile: secretKey(original), encoding: .utf8)
        let forged = text.replacing(/role = [a-z]+/, with: "role = \(role)")
        #expect(forged != text)
        let path = secretKey(name)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(forged.utf8)))
        #expect(chmod(path, 0o600) == 0)
    }

    /// Starts `kinesia ARGUMENTS --bus tcp://HUB:5555` on `host`, with `flags` after the bus.
    @discardableResult
    func start(_ name: String, on host: String, _ arguments: [String], flags: [String]) throws
        -> KinesiaProcess
    {
        try topology.start(
            name, arguments + ["--bus", topology.bus] + flags, addingBus: false,
            launcher: network.launcher(for: host))
    }

    /// Starts a client on `host` with the key `key` (`NAME.key`) and the broker's public key, or
    /// with `--insecure` on an insecure deployment, or with no security flag when `key` is nil.
    @discardableResult
    func start(_ name: String, on host: String, _ arguments: [String], key: String?) throws -> KinesiaProcess
    {
        let flags: [String]
        switch (security, key) {
        case (_, nil): flags = []
        case (.insecure, _): flags = ["--insecure"]
        case (.curve, let key?): flags = ["--key", secretKey(key), "--server-key", publicKey("broker")]
        }
        return try start(name, on: host, arguments, flags: flags)
    }

    /// A listener of `prefixes` on the consumer's host with the ward's key.
    func startListener(_ prefixes: [String]) async throws -> KinesiaProcess {
        let listener = try start(
            "listen", on: "consumer", ["listen"] + prefixes + ["--format", "json"], key: "ward")
        #expect(await listener.waitForError(containing: "listening to"), "\(listener.diagnostics)")
        return listener
    }

    /// The worker on its host, with a left and a right squat session on `cam0`.
    func startWorker() async throws -> KinesiaProcess {
        let worker = try start(
            "worker", on: "worker",
            [
                "worker", "--name", "worker", "--camera", "cam0", "--session", "left=squat:left", "--session",
                "right=squat:right",
            ], key: "worker")
        #expect(await worker.waitForError(containing: "hosting"), "\(worker.diagnostics)")
        return worker
    }

    /// The ingest of ``NamespaceHostTests/source`` on its host, at full speed.
    func startIngest() throws -> KinesiaProcess {
        try start(
            "ingest", on: "ingest",
            ["ingest", "--camera", "cam0", "--source", NamespaceHostTests.source, "--pace", "max"],
            key: "cam0")
    }

    /// A packet capture on the broker's host.
    func capture() async throws -> PacketCapture {
        try await PacketCapture.start(on: "broker", of: network, into: directory + "/broker.pcap")
    }

    /// The events of a run: `kinesia analyze`'s, and the consumer's, per event topic.
    struct PipelineRun {
        var expected: [String: [String]]
        var received: [String: [String]]
    }

    /// Runs a consumer of poses, events and snapshots, the worker and the ingest of
    /// ``NamespaceHostTests/source`` until the consumer has as many events as `kinesia analyze`
    /// gives, and nothing more comes.
    func runPipeline() async throws -> PipelineRun {
        var expected: [String: [String]] = [:]
        for side in ["left", "right"] {
            expected["event/cam0/\(side)/"] = try await Oracle.events(
                source: NamespaceHostTests.source, exercise: "squat", side: side)
        }
        #expect(expected.values.contains { $0.contains { $0.hasPrefix("{\"type\":\"repCompleted\"") } })
        let total = expected.values.map(\.count).reduce(0, +)
        // Poses and snapshots too: the capture sees every kind of message.
        let listener = try await startListener(["pose/", "event/", "snapshot/"])
        _ = try await startWorker()
        let ingest = try startIngest()
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let events = { listener.outputLines.filter { $0.hasPrefix("{\"topic\":\"event/") }.count }
        #expect(await waitUntil(timeout: .seconds(30)) { events() >= total }, "\(diagnostics)")
        _ = await listener.waitForIdleOutput(lines: 1, quiet: .seconds(1))
        #expect(await listener.stop() == 0, "\(listener.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines).filter { $0.key.hasPrefix("event/") }
        return PipelineRun(expected: expected, received: received)
    }

    /// The counter `name` of the broker's latest health report that has it.
    func brokerCounter(_ name: String) -> Int? {
        guard let health else { return nil }
        let pattern = "\"\(name)\":"
        for line in health.outputLines.reversed() {
            guard let range = line.range(of: pattern) else { continue }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        return nil
    }

    /// What every process wrote on standard error.
    var diagnostics: String { topology.diagnostics }

    /// The TCP sockets listening on host `name` (`ss -ltnH` there), one line each.
    func listeningTCPSockets(on name: String) throws -> [String] {
        let launcher = network.launcher(for: name)
        // Standard output only: a line on standard error is not a socket.
        let scratch = try ScratchDirectory("ss")
        let process = try TestProcess(
            executable: launcher[0], arguments: Array(launcher.dropFirst()) + ["ss", "-ltnH"],
            environment: ProcessInfo.processInfo.environment, standardOutput: scratch.path("out"),
            standardError: scratch.path("err"))
        let status = process.waitForExit()
        #expect(status == 0, "ss on \(name): \(TestProcess.readFile(scratch.path("err")))")
        return TestProcess.readFile(scratch.path("out")).split(separator: "\n").map(String.init)
    }

    /// Stops the processes, then deletes the hosts.
    func tearDown() {
        topology.tearDown()
        network.tearDown()
    }
}
