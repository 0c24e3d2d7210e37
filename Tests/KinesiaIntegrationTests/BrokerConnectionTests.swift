import Foundation
import Glibc
import KinesiaTestSupport
import KinesiaWire
import Synchronization
import Testing

/// A flood of idle TCP connections to a broker with few file descriptors: the broker counts
/// and reports them, refuses what it cannot hold, and an ingest whose poses reach nobody says
/// so instead of implying delivery.
@Suite(.tags(.process), .serialized)
struct BrokerConnectionTests {
    /// A TCP port on 127.0.0.1 whose next port is free too (the broker binds PORT and PORT+1).
    ///
    /// Chosen below Linux's ephemeral range (32768-60999), where no outgoing connection takes
    /// its local port: an ephemeral port found free was taken, in a CI run, by another test's
    /// connection before the broker bound it ("address already in use").
    ///
    /// Taken in turn from a block of four after the last one given in this test process (from a
    /// random start): two tests running at once never pick the same port, as they did when each
    /// drew one at random (a broker of one failed with "address already in use").
    static func freePortPair() throws -> Int {
        for _ in 0..<50 {
            let base = 10_000 + nextPortBlock.add(4, ordering: .relaxed).oldValue % 22_000
            guard let firstDescriptor = try? bind(port: base) else { continue }
            let first = (descriptor: firstDescriptor, port: base)
            defer { close(first.descriptor) }
            guard let second = try? bind(port: first.port + 1) else { continue }
            close(second)
            // And the coordinator's control port, after the broker's two.
            guard let third = try? bind(port: first.port + 2) else { continue }
            close(third)
            // And the broker's replay port (a bus with keys).
            guard let fourth = try? bind(port: first.port + 3) else { continue }
            close(fourth)
            return first.port
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// The next block of ports to try, counted from a random start (see ``freePortPair()``).
    private static let nextPortBlock = Atomic<Int>(Int.random(in: 0..<5_500) * 4)

    private static func bind(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        return descriptor
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// An idle TCP connection to `port` (it never speaks ZMTP); -1 when refused.
    static func idleConnection(port: Int) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if !connected {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    @Test func aBrokerWithFewDescriptorsReportsAFloodAndAnIngestNobodyHearsSaysSo() async throws {
        let topology = try Topology(
            bus: "tcp://127.0.0.1:\(try Self.freePortPair())", security: { _ in ["--insecure"] })
        defer { topology.tearDown() }
        let port = Int(topology.bus.split(separator: ":").last!)!
        // The broker under a limit of 64 descriptors (soft and hard), through prlimit.
        let brokerLog = topology.directory + "/broker.err"
        var environment = ProcessInfo.processInfo.environment
        environment["KINESIA_LOG_LEVEL"] = "info"
        let broker = try TestProcess(
            executable: "/usr/bin/prlimit",
            arguments: [
                "--nofile=64:64", try PackagePaths.kinesia(), "broker", "--bus", topology.bus, "--insecure",
            ],
            environment: environment, standardOutput: topology.directory + "/broker.out",
            standardError: brokerLog)
        defer { _ = broker.send(SIGKILL) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(60))
        while !TestProcess.readFile(brokerLog).contains("serving"), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(TestProcess.readFile(brokerLog).contains("at most 64"), "\(TestProcess.readFile(brokerLog))")

        // Connected before the flood: the reports still reach the test.
        let health = try HealthWatch(bus: topology.bus)
        _ = await health.wait(for: "broker", timeout: .seconds(60)) { _ in true }
        // 100 idle connections: more than the broker can hold.
        var flood: [Int32] = []
        defer { for descriptor in flood where descriptor >= 0 { close(descriptor) } }
        for _ in 0..<100 { flood.append(Self.idleConnection(port: port)) }

        let report = await health.wait(for: "broker", timeout: .seconds(30)) {
            $0.counters["connectionsAccepted", default: 0] >= 50
                && $0.counters["acceptFailures", default: 0] > 0
        }
        #expect(
            report != nil,
            "\(String(describing: health.latest["broker"]))\n\(TestProcess.readFile(brokerLog))")
        #expect(TestProcess.readFile(brokerLog).contains("near the limit of 64 file descriptors"))
        #expect(broker.isRunning)

        // An ingest nobody subscribes to: its last line is a warning that nothing was delivered.
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", "sim:squat,reps=1", "--pace", "max",
                "--wait-seconds", "0.5",
            ])
        let status = await ingest.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(ingest.diagnostics)")
        let last = ingest.errorText.split(separator: "\n").last ?? ""
        #expect(last.hasPrefix("kinesia ingest: warning: done: "), "\(ingest.diagnostics)")
        #expect(last.contains("nobody ever subscribed to pose/cam0/"), "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("none of them was delivered"), "\(ingest.diagnostics)")

        // Once the flood is gone, the broker serves again: a worker and an ingest meet.
        for descriptor in flood where descriptor >= 0 { close(descriptor) }
        flood = []
        let drained = await health.wait(for: "broker", timeout: .seconds(60)) {
            $0.counters["connections", default: 99] < 10
        }
        #expect(drained != nil, "\(String(describing: health.latest["broker"]))")
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "left=squat:left"])
        let second = try topology.start(
            "ingest-2", ["ingest", "--camera", "cam0", "--source", "sim:squat,reps=1", "--pace", "max"])
        #expect(await second.waitForExit(timeout: .seconds(60)) == 0, "\(second.diagnostics)")
        #expect(second.errorText.contains("poses sent to the broker"), "\(second.diagnostics)")
        #expect(!second.errorText.contains("delivered"), "\(second.diagnostics)")
    }
}
