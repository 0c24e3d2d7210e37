import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// The keys of one secure test bus: the broker's, one per role, and a stranger's that the broker
/// does not allow; written with mode 0600 in the topology's directory.
struct TestKeys: Sendable {
    let directory: String
    let broker: BusKey
    let ingest: BusKey
    let worker: BusKey
    let consumer: BusKey
    let stranger: BusKey
    /// A key of the control role: a therapist's `kinesia session`.
    let control: BusKey

    init(directory: String) throws {
        self.directory = directory
        func make(_ name: String, _ role: BusRole) throws -> BusKey {
            let key = BusKey(name: name, role: role, keyPair: try CurveKeyPair.generate())
            try key.write(to: directory)
            return key
        }
        broker = try make("broker", .broker)
        ingest = try make("cam0", .ingest)
        worker = try make("ward", .worker)
        consumer = try make("tablet", .consumer)
        stranger = try make("stranger", .consumer)
        control = try make("reception", .control)
        for key in [ingest, worker, consumer, control] { try AllowedKeys.allow(key.publicKey, in: allowed) }
    }

    var allowed: String { directory + "/allowed" }
    func secret(_ key: BusKey) -> String { directory + "/\(key.name).key" }
    var brokerPublic: String { directory + "/broker.pub" }

    /// The flags of each command: the broker's key and allowed directory, each client's key of
    /// its role and the broker's public key.
    func arguments(for command: String) -> [String] {
        switch command {
        case "broker", "coordinator": ["--key", secret(broker), "--allowed", allowed]
        case "session": ["--key", secret(control), "--server-key", brokerPublic]
        case "ingest": ["--key", secret(ingest), "--server-key", brokerPublic]
        case "worker": ["--key", secret(worker), "--server-key", brokerPublic]
        default: ["--key", secret(consumer), "--server-key", brokerPublic]
        }
    }

    /// The credentials of an in-test client with `key`.
    func credentials(_ key: BusKey) -> BusCredentials {
        BusCredentials(key: key, serverKey: broker.publicKey)
    }
}

/// The keys of a topology, made once its directory exists (set before any process starts).
final class KeysBox: @unchecked Sendable {
    var keys: TestKeys?
}

/// A TCP bus with CURVE, ZAP and per-role rights, between real processes on 127.0.0.1.
@Suite(.tags(.process))
struct SecureBusTests {
    /// A topology on a free TCP port pair with keys for every role.
    static func secureTopology() throws -> (Topology, TestKeys) {
        let port = try BrokerConnectionTests.freePortPair()
        let box = KeysBox()
        let topology = try Topology(bus: "tcp://127.0.0.1:\(port)") { box.keys?.arguments(for: $0) ?? [] }
        let keys = try TestKeys(directory: topology.directory + "/keys")
        box.keys = keys
        return (topology, keys)
    }

    static func address(_ topology: Topology, _ credentials: BusCredentials?) throws -> BusAddress {
        var bus = try BusAddress(parsing: topology.bus)
        bus.credentials = credentials
        return bus
    }

    @Test func eventsOverCURVEAreTheEventsOfAnalyze() async throws {
        let source = BusSource.recordings[0]
        let right = try await Oracle.events(source: source.spec, exercise: source.exercise, side: "right")
        #expect(!right.isEmpty)
        let (topology, _) = try Self.secureTopology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        #expect(broker.errorText.contains("CURVE on every TCP endpoint"))
        let listener = try await topology.startListener("listen", ["event/", "--format", "json"])
        _ = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "right=\(source.exercise):right"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", source.spec, "--pace", "max"])
        #expect(await ingest.waitForExit() == 0, "\(ingest.diagnostics)")
        #expect(
            await listener.waitForIdleOutput(lines: right.count, quiet: .seconds(2)),
            "\(topology.diagnostics)")
        #expect(await listener.stop() == 0, "\(listener.diagnostics)")
        #expect(ListenedLine.byTopic(listener.outputLines) == ["event/cam0/right/": right])
    }

    /// Publishes one event from a worker key and one from `key` on `topic`, every 20 ms, until
    /// the worker's arrives; returns what the consumer received.
    static func publishUntilControlArrives(
        _ topology: Topology, keys: TestKeys, from key: BusKey, topic: Topic, pose: Bool
    ) async throws -> [String] {
        let context = try ZMQContext()
        defer { context.terminate() }
        let subscriber = try BusSubscriber(
            context: context, bus: try address(topology, keys.credentials(keys.consumer)),
            prefixes: [.everything])
        defer { subscriber.close() }
        #expect(try subscriber.waitForConnection(timeout: .seconds(60)))
        let control = try BusPublisher(
            context: context, bus: try address(topology, keys.credentials(keys.worker)),
            connectionTimeout: .seconds(60))
        defer { control.close() }
        let intruder = try BusPublisher(
            context: context, bus: try address(topology, keys.credentials(key)),
            connectionTimeout: .seconds(60))
        defer { intruder.close() }
        let controlTopic = try Topic.event(camera: "cam0", session: "control")
        var received: [String] = []
        let clock = ContinuousClock()
        // A bound against a hang only (the loop ends at the first control message): the suite
        // once went 30 s without it while the whole test run stalled on a loaded 2-core machine.
        let deadline = clock.now.advanced(by: .seconds(90))
        while clock.now < deadline, !received.contains(controlTopic.description) {
            if pose {
                try intruder.publish(Pose(timestamp: 1), on: topic)
            } else {
                try intruder.publish(
                    json: #"{"type":"formFault","fault":"keepTrunkUpright","t":1}"#, kind: .event, on: topic)
            }
            try control.publish(json: #"{"type":"holdStarted","t":1}"#, kind: .event, on: controlTopic)
            while let delivery = try subscriber.tryReceive() {
                if case .message(let message, _) = delivery, message.topic.kind != .health {
                    received.append(message.topic.description)
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return received
    }

    @Test func aConsumerKeyCannotPublishEventsAndTheBrokerCountsTheDrops() async throws {
        let (topology, keys) = try Self.secureTopology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        let forged = try Topic.event(camera: "cam0", session: "left")
        let received = try await Self.publishUntilControlArrives(
            topology, keys: keys, from: keys.consumer, topic: forged, pose: false)
        #expect(received.contains("event/cam0/control/"), "the worker key's event never arrived")
        #expect(!received.contains(forged.description))
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        let report = await health.wait(for: "broker") {
            $0.counters["dropped.consumer.event", default: 0] > 0
        }
        #expect(report != nil, "\(broker.diagnostics)")
        #expect(report?.counters["dropped.worker.event"] == nil)
        #expect(await broker.waitForError(containing: "counted in dropped.consumer.event"))
    }

    @Test func aWorkerKeyCannotPublishPoses() async throws {
        let (topology, keys) = try Self.secureTopology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        let forged = try Topic.pose(camera: "cam0")
        let received = try await Self.publishUntilControlArrives(
            topology, keys: keys, from: keys.worker, topic: forged, pose: true)
        #expect(received.contains("event/cam0/control/"), "the worker key's event never arrived")
        #expect(!received.contains(forged.description))
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        let report = await health.wait(for: "broker") { $0.counters["dropped.worker.pose", default: 0] > 0 }
        #expect(report != nil, "\(broker.diagnostics)")
    }

    /// Subscribes to everything with `configure` applied to the socket for `duration` while
    /// an ingest and a worker run; returns the messages received.
    static func receivedBy(
        _ topology: Topology, duration: Duration, configure: (ZMQSocket) throws -> Void
    ) async throws -> Int {
        try await offCooperativePool {
            let context = try ZMQContext()
            defer { context.terminate() }
            let socket = try ZMQSocket(.sub, context: context)
            defer { socket.close() }
            try configure(socket)
            try socket.subscribe("")
            try socket.set(.receiveTimeout, .milliseconds(100))
            try socket.connect(try BusAddress(parsing: topology.bus).subscriberEndpoint)
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: duration)
            var count = 0
            while clock.now < deadline {
                if (try? socket.receive()) != nil { count += 1 }
            }
            return count
        }
    }

    @Test func anUnknownKeyAndAClientWithoutAKeyGetNothingWhileAnAllowedKeyGetsEverything() async throws {
        let (topology, keys) = try Self.secureTopology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "s=squat:left"])
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", "sim:squat,reps=3", "--loop", "--pace", "recording"])
        defer { ingest.signal(SIGTERM) }
        // Allowed (control): receives poses, events, snapshots and health.
        let allowed = try await Self.receivedBy(topology, duration: .seconds(2)) { socket in
            try socket.makeCurveClient(
                serverKey: keys.broker.keyPair.publicKey, keyPair: keys.consumer.keyPair)
        }
        #expect(allowed > 10, "\(topology.diagnostics)")
        // The right server key and a key the broker does not know: refused at the handshake.
        let stranger = try await Self.receivedBy(topology, duration: .seconds(2)) { socket in
            try socket.makeCurveClient(
                serverKey: keys.broker.keyPair.publicKey, keyPair: keys.stranger.keyPair)
        }
        #expect(stranger == 0)
        // The right server key and no client key of its own.
        let serverKeyOnly = try await Self.receivedBy(topology, duration: .seconds(1)) { socket in
            try socket.set(.curveServerKey, keys.broker.keyPair.publicKey)
        }
        #expect(serverKeyOnly == 0)
        // No key at all (plain ZMTP to a CURVE server).
        let plain = try await Self.receivedBy(topology, duration: .seconds(1)) { _ in }
        #expect(plain == 0)
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        let report = await health.wait(for: "broker") {
            $0.counters["refused.unknownKey", default: 0] > 0
                && $0.counters["refused.handshake", default: 0] > 0
        }
        #expect(report != nil, "\(broker.diagnostics)")
        #expect(await broker.waitForError(containing: "unknown key \(keys.stranger.keyPair.publicKey)"))
    }

    /// A FIFO in the allowed-keys directory (issue 19, item 9): the broker's ZAP handler reads
    /// the directory at every connection, and a blocking open of the FIFO wedged it, so that
    /// every connection after it was refused and SIGTERM did not stop the broker. Now the file
    /// is skipped, logged and counted, and everything else goes on.
    @Test func aFIFOInTheAllowedDirectoryIsSkippedAndTheBrokerAdmitsTheOthers() async throws {
        let (topology, keys) = try Self.secureTopology()
        defer { topology.tearDown() }
        let fifo = keys.allowed + "/consumer/trap.pub"
        #expect(mkfifo(fifo, 0o644) == 0)
        let broker = try topology.start("broker", ["broker"])
        #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
        let received = try await Self.receivedBy(topology, duration: .seconds(3)) { socket in
            try socket.makeCurveClient(
                serverKey: keys.broker.keyPair.publicKey, keyPair: keys.consumer.keyPair)
        }
        #expect(received > 0, "\(broker.diagnostics)")
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        let report = await health.wait(for: "broker", timeout: .seconds(60)) {
            $0.counters["admitted.consumer", default: 0] > 0
        }
        #expect(report?.counters["allowed.skipped"] == 1, "\(broker.diagnostics)")
        #expect(
            broker.errorText.contains("\(fifo): it is a FIFO, not a regular file"), "\(broker.diagnostics)")
        // Removing the FIFO changes nothing for the broker, and SIGTERM stops it.
        try FileManager.default.removeItem(atPath: fifo)
        let status = await broker.stop(grace: .seconds(5))
        #expect(status == 0, "\(broker.diagnostics)")
    }

    @Test func aTCPBusWithoutKeysIsRefusedUnlessInsecureAndAKeyOfAnotherRoleIsRefused() async throws {
        let port = try BrokerConnectionTests.freePortPair()
        let topology = try Topology(bus: "tcp://127.0.0.1:\(port)")
        defer { topology.tearDown() }
        let keys = try TestKeys(directory: topology.directory + "/keys")
        for command in [["broker"], ["listen"], ["status"], ["worker", "--session", "cam0/s=squat:left"]] {
            let process = try topology.start(command[0], command)
            #expect(await process.waitForExit() == 1, "\(process.diagnostics)")
            #expect(
                process.errorText.contains("needs") && process.errorText.contains("--insecure"),
                "\(process.diagnostics)")
        }
        let wrongRole = try topology.start(
            "worker-with-consumer-key",
            [
                "worker", "--session", "cam0/s=squat:left", "--key", keys.secret(keys.consumer),
                "--server-key",
                keys.brokerPublic,
            ])
        #expect(await wrongRole.waitForExit() == 1)
        #expect(
            wrongRole.errorText.contains("is a consumer key; this process needs a worker key"),
            "\(wrongRole.diagnostics)")
        chmod(keys.secret(keys.worker), 0o644)
        let loose = try topology.start(
            "worker-with-loose-key",
            [
                "worker", "--session", "cam0/s=squat:left", "--key", keys.secret(keys.worker), "--server-key",
                keys.brokerPublic,
            ])
        #expect(await loose.waitForExit() == 1)
        #expect(loose.errorText.contains("its mode is 644"), "\(loose.diagnostics)")

        // A fresh port pair, taken just before the broker binds it.
        let open = try Topology(bus: "tcp://127.0.0.1:\(try BrokerConnectionTests.freePortPair())")
        defer { open.tearDown() }
        let broker = try open.start("broker-insecure", ["broker", "--insecure"])
        #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
        #expect(broker.errorText.contains("INSECURE"))
        let listener = try open.start("listen-insecure", ["listen", "--insecure"])
        #expect(await listener.waitForError(containing: "listening to"), "\(listener.diagnostics)")
        #expect(listener.errorText.contains("INSECURE"))
        let health = try HealthWatch(bus: open.bus)
        let report = await health.wait(for: "broker") { _ in true }
        #expect(report?.counters["insecure"] == 1, "\(broker.diagnostics)")
    }

    /// Every process that publishes health on an insecure TCP bus says so in every report
    /// (`insecure: 1`, shown by `status` and `watch`): the recorder did not (issue 19, item 12).
    @Test func everyProcessOnAnInsecureBusCarriesInsecureInItsHealth() async throws {
        let open = try Topology(bus: "tcp://127.0.0.1:\(try BrokerConnectionTests.freePortPair())")
        defer { open.tearDown() }
        let broker = try open.start("broker-insecure", ["broker", "--insecure"])
        #expect(await broker.waitForError(containing: "serving"), "\(broker.diagnostics)")
        let health = try HealthWatch(bus: open.bus)
        _ = try open.start(
            "worker", ["worker", "--name", "worker", "--insecure", "--session", "cam0/s=squat:left"])
        _ = try open.start(
            "record", ["record", "--name", "record", "--insecure", "--db", open.directory + "/r.sqlite"])
        _ = try open.start(
            "ingest",
            [
                "ingest", "--name", "ingest", "--insecure", "--camera", "cam0", "--source",
                "sim:squat,seed=3", "--pace", "recording", "--loop",
            ])
        for process in ["broker", "worker", "record", "ingest"] {
            let report = await health.wait(for: process) { _ in true }
            #expect(report != nil, "no health report of \(process): \(open.diagnostics)")
            #expect(report?.counters["insecure"] == 1, "\(process): \(String(describing: report?.counters))")
        }
    }

    /// A client of another user id over IPC, even with the directory and sockets opened to all by
    /// mistake: refused by the broker's ZAP handler, and counted.
    @Test(.enabled(if: getuid() == 0, "needs root to run a client as another user (setpriv)"))
    func anotherLocalUserCannotUseTheIPCBusEvenWithLoosePermissions() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        // The mistake: everything opened to everyone.
        for path in [topology.directory, topology.bus] { chmod(path, 0o755) }
        for name in ["pub.sock", "sub.sock"] { chmod(topology.bus + "/" + name, 0o777) }
        let source = topology.directory + "/other_user.c"
        let program = topology.directory + "/other_user"
        try Self.otherUserProgram.write(toFile: source, atomically: true, encoding: .utf8)
        let compile = try TestProcess(
            executable: "/usr/bin/cc", arguments: [source, "-o", program, "-lzmq"],
            environment: ProcessInfo.processInfo.environment,
            standardOutput: topology.directory + "/cc.out", standardError: topology.directory + "/cc.err")
        #expect(
            await offCooperativePool { compile.waitForExit() } == 0,
            "\(TestProcess.readFile(topology.directory + "/cc.err"))")
        let context = try ZMQContext()
        defer { context.terminate() }
        let own = try BusSubscriber(
            context: context, bus: try BusAddress(parsing: topology.bus), prefixes: [.kind(.event)])
        defer { own.close() }
        let other = try TestProcess(
            executable: "/usr/bin/setpriv",
            arguments: ["--reuid", "65534", "--regid", "65534", "--clear-groups", program, topology.bus],
            environment: [:],
            standardOutput: topology.directory + "/other.out",
            standardError: topology.directory + "/other.err")
        #expect(
            await offCooperativePool { other.waitForExit() } == 0,
            "\(TestProcess.readFile(topology.directory + "/other.err"))")
        #expect(TestProcess.readFile(topology.directory + "/other.out").contains("received 0"))
        #expect(try own.tryReceive() == nil, "the other user's event reached the broker's user")
        let health = try HealthWatch(bus: topology.bus)
        let report = await health.wait(for: "broker") { $0.counters["refused.otherUser", default: 0] >= 2 }
        #expect(report != nil, "\(broker.diagnostics)")
    }

    /// Connects a SUB and a PUB to the bus directory given as argument, publishes events for
    /// 1.5 s and prints how many messages it received.
    static let otherUserProgram = """
        #include <stdio.h>
        #include <string.h>
        #include <zmq.h>
        int main(int argc, char **argv) {
            char sub_endpoint[256], pub_endpoint[256];
            snprintf(sub_endpoint, sizeof sub_endpoint, "ipc://%s/sub.sock", argv[1]);
            snprintf(pub_endpoint, sizeof pub_endpoint, "ipc://%s/pub.sock", argv[1]);
            void *context = zmq_ctx_new();
            void *sub = zmq_socket(context, ZMQ_SUB);
            void *pub = zmq_socket(context, ZMQ_PUB);
            int linger = 0, timeout = 100;
            zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
            zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof linger);
            zmq_setsockopt(sub, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
            zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
            if (zmq_connect(sub, sub_endpoint) != 0 || zmq_connect(pub, pub_endpoint) != 0) return 2;
            int received = 0;
            char buffer[256];
            for (int round = 0; round < 15; round++) {
                zmq_send(pub, "event/cam0/left/", 16, ZMQ_SNDMORE);
                zmq_send(pub, "forged", 6, 0);
                if (zmq_recv(sub, buffer, sizeof buffer, 0) >= 0) received++;
            }
            printf("received %d\\n", received);
            zmq_close(sub);
            zmq_close(pub);
            zmq_ctx_term(context);
            return 0;
        }
        """
}
