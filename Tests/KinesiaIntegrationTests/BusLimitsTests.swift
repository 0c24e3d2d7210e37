import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// What the bus can carry never hurts its processes: an oversized frame is refused before it is
/// stored, and a consumer survives a payload that is not what it expects.
@Suite(.tags(.process), .serialized)
struct BusLimitsTests {
    /// `VmHWM` (the peak resident memory) of a process, in bytes.
    static func peakMemory(of pid: Int32) -> Int? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// A PUB socket of the test connected to the broker's publisher side: nothing in it
    /// limits what it sends.
    static func injector(bus: String, context: ZMQContext) throws -> ZMQSocket {
        let socket = try ZMQSocket(.pub, context: context, linger: .seconds(2))
        try socket.connect(try BusAddress(parsing: bus).publisherEndpoint)
        return socket
    }

    @Test func oversizedFramesNeitherGrowTheBrokerNorTheListenerAndNormalMessagesStillFlow() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let broker = try await topology.startBroker()
        let listener = try await topology.startListener("listen", ["event/"])
        // The listener stops reading: whatever the broker accepts for it stays queued there.
        listener.signal(SIGSTOP)

        let context = try ZMQContext()
        defer { context.terminate() }
        let injector = try Self.injector(bus: topology.bus, context: context)
        defer { injector.close() }
        try await Task.sleep(for: .milliseconds(300))
        let topic = Array("event/cam0/left/".utf8)
        let header = WireHeader(kind: .event, streamID: StreamID(7), sequence: 0, sentAt: 0)
        let huge = header.bytes + [UInt8](repeating: UInt8(ascii: " "), count: 20_000_000)
        for _ in 0..<10 {
            try injector.send([topic, huge])
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(1))
        let brokerPeak = try #require(Self.peakMemory(of: broker.pid))
        listener.signal(SIGCONT)
        try await Task.sleep(for: .milliseconds(500))
        let listenerPeak = try #require(Self.peakMemory(of: listener.pid))
        // 10 x 20 MB were sent: before the limit, the broker held them all (over 200 MB).
        #expect(brokerPeak < 80_000_000, "broker VmHWM \(brokerPeak)\n\(topology.diagnostics)")
        #expect(listenerPeak < 80_000_000, "listen VmHWM \(listenerPeak)\n\(topology.diagnostics)")

        // A normal message still goes through (the injector was only disconnected).
        let publisher = try BusPublisher(
            context: context, bus: try BusAddress(parsing: topology.bus), connectionTimeout: .seconds(60))
        defer { publisher.close() }
        var delivered = false
        let until = ContinuousClock.now + .seconds(60)  // a bound against a hang only
        var sequence = 0
        while !delivered, ContinuousClock.now < until {
            defer { sequence += 1 }
            try publisher.publish(
                json: #"{"type":"holdStarted","t":\#(sequence)}"#, kind: .event,
                on: try .event(camera: "cam0", session: "left"))
            delivered = await listener.waitForOutputLines(1, timeout: .milliseconds(100))
        }
        #expect(delivered, "\(topology.diagnostics)")
        #expect(listener.output.contains("holdStarted"), "\(listener.output)")
        #expect(broker.isRunning && listener.isRunning)
    }

    @Test func thePythonExampleReportsAnEventThatIsNotJSONAndPrintsTheNextOne() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let (example, output, errors) = try PythonExample.startListener(on: topology)
        defer { _ = example.send(SIGKILL) }

        let context = try ZMQContext()
        defer { context.terminate() }
        let publisher = try BusPublisher(
            context: context, bus: try BusAddress(parsing: topology.bus), connectionTimeout: .seconds(60))
        defer { publisher.close() }
        let topic = try Topic.event(camera: "cam0", session: "left")
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(90))
        // Until the example has subscribed (slow joiner), pairs of a bad and a good event.
        var printed = false
        while !printed, clock.now < deadline {
            try publisher.publish(json: "not json {", kind: .event, on: topic)
            try publisher.publish(json: #"{"type":"holdStarted","t":1.5}"#, kind: .event, on: topic)
            try await Task.sleep(for: .milliseconds(100))
            printed = TestProcess.readFile(output).contains("holdStarted")
            #expect(example.isRunning, "\(TestProcess.readFile(errors))")
            if !example.isRunning { break }
        }
        let stdout = TestProcess.readFile(output)
        let stderr = TestProcess.readFile(errors)
        #expect(printed, "stdout: \(stdout)\nstderr: \(stderr)")
        #expect(stdout.contains("event/cam0/left/"), "\(stdout)")
        #expect(stderr.contains("not valid JSON"), "\(stderr)")
        #expect(!stderr.contains("Traceback"), "\(stderr)")
    }
}
