import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaJSON
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// `scripts/examples/listen_events.py`, the Python consumer of the README, on a real broker fed
/// with hostile messages: the invalid wire fixtures, seeded mutations of a valid event that the
/// Swift decoder refuses, and messages of the wrong number of frames. It must report and skip
/// each one, never stop, and still print the valid events around them.
@Suite(.timeLimit(.minutes(2)), .tags(.process))
struct PythonExampleTests {
    static let example = PackagePaths.path("scripts/examples/listen_events.py")
    static let fixtures = PackagePaths.url("Tests/KinesiaWireTests/Fixtures")
    static let topic = Array("event/cam0/left/".utf8)
    static let stream = StreamID(0x1234)

    static func event(_ sequence: UInt64) throws -> [UInt8] {
        try JSONPayloadCodec.encode(
            json: #"{"type":"holdStarted","t":\#(sequence)}"#,
            header: WireHeader(kind: .event, streamID: stream, sequence: sequence, sentAt: 1))
    }

    /// The invalid fixtures (topic, payload), from `expected.json`.
    static func invalidFixtures() throws -> [([UInt8], [UInt8])] {
        let document = try JSONParser.parse(
            bytes: Array(try Data(contentsOf: fixtures.appendingPathComponent("expected.json"))))
        guard case .object(let root) = document, case .array(let entries) = root["invalid"] else { return [] }
        return try entries.compactMap { entry in
            guard case .object(let fields) = entry, case .string(let file) = fields["file"],
                case .string(let topic) = fields["topic"]
            else { return nil }
            return (Array(topic.utf8), Array(try Data(contentsOf: fixtures.appendingPathComponent(file))))
        }
    }

    /// Seeded spoilt copies of a valid event (random bytes, cuts, bit flips, a valid header over
    /// garbage), kept when the Swift decoder refuses them.
    static func mutations(count: Int) throws -> [([UInt8], [UInt8])] {
        var generator = SplitMix64(seed: 0x5059)
        let valid = try event(99)
        var result: [([UInt8], [UInt8])] = []
        while result.count < count {
            var payload = valid
            switch generator.next() % 4 {
            case 0:
                payload = (0..<Int(generator.next() % 200)).map { _ in
                    UInt8(truncatingIfNeeded: generator.next())
                }
            case 1: payload = Array(valid.prefix(Int(generator.next() % UInt64(valid.count))))
            case 2:
                for _ in 0...(generator.next() % 4) {
                    let bit = Int(generator.next() % UInt64(payload.count * 8))
                    payload[bit / 8] ^= 1 << (bit % 8)
                }
            default:
                payload = Array(valid.prefix(WireFormat.headerSize))
                payload += (0..<Int(generator.next() % 100)).map { _ in
                    UInt8(truncatingIfNeeded: generator.next())
                }
            }
            var topic = Self.topic
            if generator.next() % 5 == 0 { topic[Int(generator.next() % UInt64(topic.count))] ^= 0x40 }
            if (try? WireMessage.decode(topic: topic, payload: payload)) == nil {
                result.append((topic, payload))
            }
        }
        return result
    }

    @Test func theExampleSkipsEveryHostileMessageAndKeepsPrintingEvents() async throws {
        let python = try PackagePaths.python()
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        let output = topology.directory + "/example.out"
        let errors = topology.directory + "/example.err"
        let example = try TestProcess(
            executable: python, arguments: [Self.example, "--bus", topology.bus, "--prefix", ""],
            environment: environment, standardOutput: output, standardError: errors)
        defer { if example.isRunning { example.send(SIGKILL) } }
        let printed = { TestProcess.readFile(output).split(separator: "\n").map(String.init) }
        let reported = { TestProcess.readFile(errors).split(separator: "\n").map(String.init) }

        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try ZMQSocket(.pub, context: context)
        defer { socket.close() }
        try socket.set(.sendHighWaterMark, 100_000)
        try socket.connect(try BusAddress(parsing: topology.bus).publisherEndpoint)

        // Valid events until the example prints one: its subscription has reached the broker.
        var sequence: UInt64 = 0
        let subscribed = await waitUntil(timeout: .seconds(30)) {
            _ = try? socket.trySend([Self.topic, try Self.event(sequence)])
            sequence += 1
            return printed().contains { $0.hasPrefix("event/cam0/left/ ") }
        }
        #expect(subscribed, "the example printed no event:\n\(reported().joined(separator: "\n"))")
        try #require(subscribed)

        let hostile = try Self.invalidFixtures() + Self.mutations(count: 300)
        #expect(hostile.count == 314)
        for (topic, payload) in hostile { try socket.send([topic, payload]) }
        let frameCounts = [1, 3, 4]
        for count in frameCounts { try socket.send(Array(repeating: Self.topic, count: count)) }
        try socket.send([Self.topic, try Self.event(1000)])

        let finished = await waitUntil(timeout: .seconds(30)) {
            printed().contains { $0.hasPrefix("event/cam0/left/ 1000 ") } || !example.isRunning
        }
        let stderr = reported().joined(separator: "\n")
        #expect(finished && example.isRunning, "the example stopped or missed the last event:\n\(stderr)")
        #expect(!stderr.contains("Traceback"), "\(stderr)")
        let skipped = reported().filter { $0.hasPrefix("skipped: ") }
        #expect(
            skipped.count == hostile.count, "\(skipped.count) of \(hostile.count) hostile messages reported")
        for count in frameCounts {
            #expect(reported().contains("skipped a message of \(count) frames"), "\(stderr)")
        }
        // Each report names the wire error, as the Swift decoder calls it.
        for (index, (topic, payload)) in hostile.enumerated() where index < skipped.count {
            do {
                _ = try WireMessage.decode(topic: topic, payload: payload)
            } catch {
                #expect(
                    skipped[index].hasPrefix("skipped: \(error.code)"), "\(skipped[index]) (Swift: \(error))")
            }
        }

        example.send(SIGTERM)
        #expect(
            await example.waitForExit(timeout: .seconds(60)) == 0, "\(reported().joined(separator: "\n"))")
        #expect(reported().last?.hasPrefix("delivered ") == true, "\(reported().joined(separator: "\n"))")
    }
}
