import Foundation
import KinesiaJSON
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// The clone's Python (`PackagePaths.python()`, with the `kinesia` package of `clients/python`)
/// with its outputs kept apart: standard output is what the tests compare, standard error is
/// shown when something fails.
enum Python {
    /// The package's test-vector tool, `python -m kinesia.fixtures`.
    static let fixtures = ["-m", "kinesia.fixtures"]
    static let driver = [PackagePaths.path("Tests/KinesiaWireTests/Python/wire_driver.py")]

    /// Runs `python PROGRAM ARGUMENTS` (a script, or `-m MODULE`) to its end.
    static func run(_ program: [String], _ arguments: [String]) throws -> (
        status: Int32, output: String, error: String
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-python-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out").path
        let error = directory.appendingPathComponent("err").path
        let process = try TestProcess(
            executable: try PackagePaths.python(), arguments: program + arguments,
            environment: ProcessInfo.processInfo.environment, standardOutput: output, standardError: error)
        let status = process.waitForExit()
        return (status, TestProcess.readFile(output), TestProcess.readFile(error))
    }

    /// Writes `contents` to a new temporary file and returns its path (removed by `cleanUp`).
    static func temporaryFile(_ contents: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-python-\(UUID().uuidString.prefix(8))"
        ).path
        try Data(contents).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// What the Python decoder must answer: the Swift decoder's result in the shape the test driver
/// prints (`Python/wire_driver.py`).
enum SwiftAnswer {
    static func expected(topic: [UInt8], payload: [UInt8]) -> JSONValue {
        let message: WireMessage
        do {
            message = try WireMessage.decode(topic: topic, payload: payload)
        } catch {
            return .object(["error": .string(error.code)])
        }
        var result: [String: JSONValue] = [
            "topic": .string(String(decoding: message.topic.bytes, as: UTF8.self)),
            "header": header(message.header),
        ]
        switch message.body {
        case .pose(let pose): result["pose"] = Self.pose(pose)
        case .event(let json), .snapshot(let json), .session(let json): result["json"] = .string(json)
        case .health:
            result["json"] = .string((try? JSONPayloadCodec.decode(payload).json) ?? "")
        }
        return .object(result)
    }

    static func header(_ header: WireHeader) -> JSONValue {
        .object([
            "kind": .string(header.kind.name), "stream_id": .string(header.streamID.description),
            "sequence": .string("\(header.sequence)"), "sent_at_ns": .string("\(header.sentAt)"),
        ])
    }

    /// A pose in the recordings' JSON shape, as `kinesia.wire.decode_pose` returns it.
    static func pose(_ pose: Pose) -> JSONValue {
        var result: [String: JSONValue] = [
            "t": .number(pose.timestamp),
            "points": .object(
                Dictionary(
                    uniqueKeysWithValues: pose.points.map {
                        ($0.key.rawValue, .array([.number(Double($0.value.x)), .number(Double($0.value.y))]))
                    })),
            "confidence": .object(
                Dictionary(uniqueKeysWithValues: pose.confidence.map { ($0.key.rawValue, .number($0.value)) })
            ),
        ]
        if let size = pose.imageSize {
            result["w"] = .number(Double(size.width))
            result["h"] = .number(Double(size.height))
        }
        return .object(result)
    }
}

extension PayloadKind {
    /// The kind's name in the Python module (`pose`, `event`, `snapshot`, `health`).
    fileprivate var name: String {
        switch self {
        case .pose: "pose"
        case .event: "event"
        case .snapshot: "snapshot"
        case .health: "health"
        case .session: "session"
        }
    }
}

/// The Python client (`kinesia.wire`, `kinesia.sequence`) against the Swift decoders: the hostile corpus of the Swift tests
/// (the invalid fixtures and the robustness test's seeded mutations), its `decode` command on
/// the fixtures, and its sequence tracker against Swift's ``SequenceTracker``. Python runs as
/// a process, as a user runs it.
@Suite(.tags(.process))
struct PythonWireTests {
    /// The fixtures, then the first `count` inputs of the robustness test's first chunk (the
    /// same seed, the same draws, the same mutations).
    static func hostileCorpus(count: Int) throws -> [(topic: [UInt8], payload: [UInt8])] {
        var corpus: [(topic: [UInt8], payload: [UInt8])] = try WireFixtures.valid().map {
            try $0.message.encode()
        }
        corpus += try WireFixtures.invalid().map { (Array($0.topic.utf8), $0.payload) }
        let seeds = corpus
        let topics =
            seeds.map(\.topic)
            + ["pose/", "event/a/", "health/../", "snapshot/a/b/c/", ""].map { Array($0.utf8) }
        var generator = SplitMix64(seed: 0x4B57_0001)
        var payload: [UInt8] = []
        for iteration in 0..<count {
            let seed = seeds[Int(generator.next() % UInt64(seeds.count))]
            WireRobustnessTests.mutate(
                seed.payload, into: &payload, strategy: iteration % 5, using: &generator)
            var topic = topics[Int(generator.next() % UInt64(topics.count))]
            if generator.next() % 4 == 0, !topic.isEmpty {
                topic[Int(generator.next() % UInt64(topic.count))] ^= UInt8(
                    truncatingIfNeeded: generator.next() | 1)
            }
            corpus.append((topic, payload))
        }
        return corpus
    }

    /// The driver's input: `[u32 LE length][topic][u32 LE length][payload]` per case.
    static func casesFile(_ corpus: [(topic: [UInt8], payload: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (topic, payload) in corpus {
            for frame in [topic, payload] {
                withUnsafeBytes(of: UInt32(frame.count).littleEndian) { bytes += $0 }
                bytes += frame
            }
        }
        return bytes
    }

    @Test(.timeLimit(.minutes(2)))
    func pythonAnswersEveryHostileInputAsSwiftDoesAndRaisesOnlyWireError() async throws {
        try await offCooperativePool {
            let corpus = try Self.hostileCorpus(count: 3000)
            let file = try Python.temporaryFile(Self.casesFile(corpus))
            defer { try? FileManager.default.removeItem(atPath: file) }
            let run = try Python.run(Python.driver, ["decode", file])
            #expect(run.status == 0, "\(run.error)")
            let lines = run.output.split(separator: "\n")
            try #require(
                lines.count == corpus.count, "\(lines.count) answers to \(corpus.count) inputs:\n\(run.error)"
            )

            var mismatches: [String] = []
            var decoded = 0
            var codes: Set<String> = []
            for (index, line) in lines.enumerated() {
                let answer = try JSONParser.parse(line)
                let (topic, payload) = corpus[index]
                let expected = SwiftAnswer.expected(topic: topic, payload: payload)
                if case .object(let fields) = expected {
                    if case .string(let code) = fields["error"] { codes.insert(code) } else { decoded += 1 }
                }
                if answer != expected {
                    mismatches.append(
                        "input \(index) (topic \(topic.hex), payload \(payload.hex)):\n  python \(line)\n  swift  \(expected)"
                    )
                }
            }
            #expect(
                mismatches.count == 0,
                "\(mismatches.count) of \(corpus.count) inputs answered differently; the first:\n\(mismatches.prefix(5).joined(separator: "\n"))"
            )
            // The corpus reached every layer: messages that decode, and many kinds of refusal.
            #expect(decoded > 50)  // 70 of the 3000 seeded inputs
            for code in [
                "truncated", "badMagic", "unsupportedVersion", "unknownKind", "trailingBytes",
                "unsupportedFlags",
                "nonFinite", "unknownJoint", "duplicateJoint", "tooManyJoints", "invalidUTF8", "emptyJSON",
                "topicMismatch", "invalidTopic",
            ] {
                #expect(codes.contains(code), "no input was refused with \(code)")
            }
        }
    }

    // MARK: - The decode command

    @Test func decodePrintsEachValidFixtureAsSwiftDecodesIt() async throws {
        try await offCooperativePool {
            for vector in try WireFixtures.valid() {
                let path = fixturesDirectory.appendingPathComponent(vector.file).path
                let topic = String(decoding: vector.message.topic.bytes, as: UTF8.self)
                for withTopic in [true, false] {
                    let run = try Python.run(
                        Python.fixtures, ["decode", path] + (withTopic ? ["--topic", topic] : []))
                    #expect(run.status == 0, "\(vector.file): \(run.error)")
                    #expect(run.error == "")
                    guard case .object(let printed) = try JSONParser.parse(run.output) else {
                        Issue.record("\(vector.file): not a JSON object: \(run.output)")
                        continue
                    }
                    let payload = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
                    guard
                        case .object(var expected) = SwiftAnswer.expected(
                            topic: Array(topic.utf8), payload: payload)
                    else { continue }
                    // The command prints numbers as numbers: compare the header's exactly, as text.
                    let header = vector.message.header
                    #expect(run.output.contains("\"sequence\": \(header.sequence),"), "\(run.output)")
                    #expect(run.output.contains("\"sent_at_ns\": \(header.sentAt)"), "\(run.output)")
                    #expect(run.output.contains("\"stream_id\": \"\(header.streamID)\""), "\(run.output)")
                    #expect(run.output.contains("\"kind\": \"\(header.kind.name)\""), "\(run.output)")
                    expected["header"] = nil
                    if !withTopic { expected["topic"] = nil }
                    var compared = printed
                    compared["header"] = nil
                    if case .string(let json) = expected["json"] {
                        // JSON payloads are also shown parsed, under "body".
                        #expect(compared["body"] == (try JSONParser.parse(json)), "\(vector.file)")
                        compared["body"] = nil
                    }
                    #expect(
                        compared == expected, "\(vector.file) (topic given: \(withTopic)):\n\(run.output)")
                }
            }
        }
    }

    @Test func decodeRefusesEachInvalidFixtureWithItsErrorAndStatusOne() async throws {
        try await offCooperativePool {
            for vector in try WireFixtures.invalid() {
                let path = fixturesDirectory.appendingPathComponent(vector.file).path
                let run = try Python.run(Python.fixtures, ["decode", path, "--topic", vector.topic])
                #expect(run.status == 1, "\(vector.file): \(run.output)")
                #expect(run.output == "")
                #expect(run.error.hasPrefix("\(path): \(vector.code)"), "\(vector.file): \(run.error)")
                #expect(!run.error.contains("Traceback"))
            }
        }
    }

    @Test func decodeWithoutAFileIsAUsageError() async throws {
        try await offCooperativePool {
            for arguments in [["decode"], ["decode", "a", "b"], []] {
                let run = try Python.run(Python.fixtures, arguments)
                #expect(run.status == 64, "\(arguments)")
                #expect(run.error.hasPrefix("usage: python -m kinesia.fixtures decode FILE [--topic TOPIC]"))
            }
        }
    }

    // MARK: - The sequence tracker

    /// Feeds `events` (topic, stream id, sequence) to the Python tracker: its results and totals.
    static func pythonTrack(_ events: [(String, UInt64, UInt64)]) throws -> (
        results: [String], totals: [String: Int]
    ) {
        let text =
            "["
            + events.map { "[\"\($0.0)\", \"\(StreamID($0.1).description)\", \($0.2)]" }.joined(
                separator: ",") + "]"
        let file = try Python.temporaryFile(Array(text.utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let run = try Python.run(Python.driver, ["track", file])
        #expect(run.status == 0, "\(run.error)")
        var lines = run.output.split(separator: "\n").map(String.init)
        let totalsLine = lines.popLast() ?? ""
        var totals: [String: Int] = [:]
        if case .object(let fields) = try JSONParser.parse(totalsLine) {
            for (key, value) in fields {
                if case .number(let n) = value { totals[key] = Int(exactly: n) ?? -1 }
            }
        }
        let results = try lines.map { line -> String in
            guard case .string(let result) = try JSONParser.parse(line) else { return "?" }
            return result
        }
        return (results, totals)
    }

    static let a: UInt64 = 0xA
    static let topic = "pose/cam0/"

    @Test func trackerStartsAStreamThenCountsInOrderMessages() async throws {
        try await offCooperativePool {
            let run = try Self.pythonTrack([
                (Self.topic, Self.a, 0), (Self.topic, Self.a, 1), (Self.topic, Self.a, 2),
            ])
            #expect(run.results == ["newStream", "inOrder", "inOrder"])
            #expect(run.totals == ["delivered": 3, "missing": 0, "duplicates": 0, "restarts": 0])
        }
    }

    @Test func trackerLetsALateJoinerStartMidStreamWithoutAGap() async throws {
        try await offCooperativePool {
            let run = try Self.pythonTrack([
                (Self.topic, Self.a, 500), (Self.topic, Self.a, 501), (Self.topic, Self.a, 499),
            ])
            #expect(run.results == ["newStream", "inOrder", "old"])
            #expect(run.totals["missing"] == 0)
        }
    }

    @Test func trackerCountsTheMessagesOfAGap() async throws {
        try await offCooperativePool {
            let run = try Self.pythonTrack([(Self.topic, Self.a, 0), (Self.topic, Self.a, 5)])
            #expect(run.results == ["newStream", "gap:4"])
            #expect(run.totals == ["delivered": 2, "missing": 4, "duplicates": 0, "restarts": 0])
        }
    }

    @Test func trackerCallsARepeatedMessageOld() async throws {
        try await offCooperativePool {
            let run = try Self.pythonTrack([
                (Self.topic, Self.a, 0), (Self.topic, Self.a, 1), (Self.topic, Self.a, 1),
                (Self.topic, Self.a, 0),
            ])
            #expect(run.results == ["newStream", "inOrder", "old", "old"])
            #expect(run.totals == ["delivered": 2, "missing": 0, "duplicates": 2, "restarts": 0])
        }
    }

    @Test func trackerTakesANewStreamIdForARestartNotAGap() async throws {
        try await offCooperativePool {
            let run = try Self.pythonTrack(
                (0..<10).map { (Self.topic, Self.a, UInt64($0)) } + [
                    (Self.topic, 0xB, 0), (Self.topic, 0xB, 1),
                ])
            #expect(run.results.suffix(2) == ["restart", "inOrder"])
            #expect(run.totals == ["delivered": 12, "missing": 0, "duplicates": 0, "restarts": 1])
        }
    }

    @Test func trackerFollowsTopicsIndependently() async throws {
        try await offCooperativePool {
            let run = try Self.pythonTrack([
                ("pose/cam0/", Self.a, 0), ("pose/cam1/", Self.a, 0), ("pose/cam0/", Self.a, 1),
                ("pose/cam1/", Self.a, 3),
            ])
            #expect(run.results == ["newStream", "newStream", "inOrder", "gap:2"])
            #expect(run.totals["missing"] == 2)
        }
    }

    @Test func trackerHandlesExtremeSequenceNumbers() async throws {
        try await offCooperativePool {
            let run = try Self.pythonTrack([
                (Self.topic, Self.a, 0), (Self.topic, Self.a, .max), (Self.topic, Self.a, .max),
                (Self.topic, Self.a, 5),
            ])
            #expect(run.results == ["newStream", "gap:\(UInt64.max - 1)", "old", "old"])
        }
    }

    /// A seeded flood over two topics and three senders with losses, duplicates, late arrivals
    /// and restarts: every Python result is Swift's, in the Python module's words (a duplicate,
    /// a late or a stale message is "old"), and the totals add up the same.
    @Test func trackerAnswersAFloodAsSwiftsSequenceTrackerDoes() async throws {
        try await offCooperativePool {
            var generator = SplitMix64(seed: 7)
            var events: [(String, UInt64, UInt64)] = []
            // Per topic: the sender's stream id and the next sequence number it would send.
            var sender: [String: (stream: UInt64, next: UInt64)] = [
                "pose/cam0/": (1, 0), "event/cam0/left/": (2, 0),
            ]
            for _ in 0..<3000 {
                let topic = generator.next() % 2 == 0 ? "pose/cam0/" : "event/cam0/left/"
                var (stream, next) = sender[topic]!
                var sequence = next
                switch generator.next() % 100 {
                case 0..<10: sequence += 1 + generator.next() % 5  // lost messages
                case 10..<15: sequence = next > 0 ? next - 1 : 0  // a duplicate
                case 15..<20: sequence = next > 3 ? next - 3 : 0  // a late one
                case 20..<22:  // the sender restarts (sometimes as an earlier stream id)
                    stream = 1 + generator.next() % 3
                    sequence = generator.next() % 3
                    next = 0
                default: break
                }
                events.append((topic, stream, sequence))
                sender[topic] = (stream, max(next, sequence + 1))
            }
            var swift = SequenceTracker<String>()
            var expected: [String] = []
            var delivered = 0
            var missing: UInt64 = 0
            var old = 0
            for (topic, stream, sequence) in events {
                switch swift.record(stream: StreamID(stream), sequence: sequence, on: topic) {
                case .newStream(let restart, _):
                    expected.append(restart ? "restart" : "newStream")
                    delivered += 1
                case .inOrder:
                    expected.append("inOrder")
                    delivered += 1
                case .gap(let missed):
                    expected.append("gap:\(missed)")
                    delivered += 1
                    missing += missed
                case .duplicate, .outOfOrder, .stale:
                    expected.append("old")
                    old += 1
                }
            }
            let run = try Self.pythonTrack(events)
            #expect(run.results.count == events.count)
            let first = zip(run.results, expected).enumerated().first { $0.element.0 != $0.element.1 }
            #expect(
                first == nil,
                "event \(first?.offset ?? 0): python \(first?.element.0 ?? ""), swift \(first?.element.1 ?? "")"
            )
            #expect(
                run.totals == [
                    "delivered": delivered, "missing": Int(missing), "duplicates": old,
                    "restarts": Int(swift.totals.restarts),
                ])
            #expect(
                Set(expected.map { $0.hasPrefix("gap:") ? "gap" : $0 }) == [
                    "newStream", "restart", "inOrder", "gap", "old",
                ])
        }
    }
}
