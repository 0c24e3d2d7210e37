import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// A fenced holder's message is refused by a real `kinesia broker`: a session's stream at
/// epoch 5, then a message at epoch 4 under a number the newer holder publishes too. No reader
/// ever gets the stale one, readers that know nothing of epochs (`kinesia listen`, the Python
/// example reading `[topic, payload]` with pyzmq, the Swift subscriber) see no message of a
/// strange shape, and the broker counts the refusal on `health/broker/`.
@Suite(.tags(.process), .serialized)
struct EpochFencingIntegrationTests {
    @Test func theBrokerRefusesAStaleEpochAndReadersWithoutEpochsGetEveryOtherMessageAsTwoFrames()
        async throws
    {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener("listen", ["event/"])
        let (example, output, errors) = try PythonExample.startListener(on: topology)
        defer { _ = example.send(SIGKILL) }

        let context = try ZMQContext()
        defer { context.terminate() }
        let bus = try BusAddress(parsing: topology.bus)
        let subscriber = try BusSubscriber(context: context, bus: bus, prefixes: [.kind(.event)])
        defer { subscriber.close() }
        try subscriber.subscribe(text: "health/broker/")
        let publisher = try BusPublisher(context: context, bus: bus, connectionTimeout: .seconds(60))
        defer { publisher.close() }
        let topic = try Topic.event(camera: "cam0", session: "left")
        func event(_ t: Double) -> String { #"{"type":"holdStarted","t":\#(t)}"# }
        var received: [String] = []
        var brokerCounters: [String: Int] = [:]
        func read() throws {
            while let delivery = try subscriber.tryReceive() {
                guard case .message(let message, _) = delivery else { continue }
                switch message.body {
                case .event(let json): received.append(json)
                case .health(let report): brokerCounters = report.counters
                default: break
                }
            }
        }

        // The session's holder at epoch 5, until every reader has joined (slow joiners).
        publisher.epoch = 5
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(90))
        var t = 0.0
        while clock.now < deadline, example.isRunning {
            t += 1
            try publisher.publish(json: event(t), kind: .event, on: topic)
            try await Task.sleep(for: .milliseconds(100))
            try read()
            if !received.isEmpty, listener.output.contains("holdStarted"),
                TestProcess.readFile(output).contains("holdStarted")
            {
                break
            }
        }
        #expect(!received.isEmpty, "\(topology.diagnostics)")

        // A fenced holder (epoch 4) sends number n; the holder at epoch 5 publishes its own n.
        let stream = publisher.streamID(on: topic)
        let number = (publisher.lastSequence(on: topic) ?? 0) + 1
        publisher.epoch = 4
        try publisher.publish(json: event(999.5), kind: .event, on: topic)
        publisher.continueStream(stream, on: topic, after: number - 1)
        publisher.epoch = 5
        try publisher.publish(json: event(1000.5), kind: .event, on: topic)
        #expect(publisher.lastSequence(on: topic) == number)
        // A message without an epoch (a worker of --session flags) goes on as ever.
        publisher.epoch = nil
        try publisher.publish(json: event(1001.5), kind: .event, on: topic)

        let seen = await waitUntil(timeout: .seconds(60)) {
            (try? read()) != nil && received.last == event(1001.5)
                && brokerCounters["refused.staleEpoch"] == 1
                && listener.output.contains("1001.5") && TestProcess.readFile(output).contains("1001.5")
        }
        let stdout = TestProcess.readFile(output)
        let stderr = TestProcess.readFile(errors)
        #expect(seen, "counters \(brokerCounters)\n\(topology.diagnostics)\nexample: \(stdout)\n\(stderr)")
        #expect(received.suffix(2) == [event(1000.5), event(1001.5)])
        #expect(!received.contains(event(999.5)))
        #expect(subscriber.decodeErrorCount == 0, "\(subscriber.decodeErrors)")
        #expect(brokerCounters["epochs"] ?? 0 >= 2, "\(brokerCounters)")
        #expect(
            listener.output.contains("1000.5") && !listener.output.contains("999.5"), "\(listener.output)")
        #expect(!listener.errorText.contains("frame"), "\(listener.errorText)")
        #expect(stdout.contains("1000.5") && !stdout.contains("999.5"), "\(stdout)")
        #expect(!stderr.contains("skipped") && !stderr.contains("Traceback"), "\(stderr)")
    }
}
