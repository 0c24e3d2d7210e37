import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaJSON
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// `scripts/examples/events_to_csv.py`, the Python consumer that writes one CSV file per session
/// exactly once, on a real bus: a broker, an ingest and a worker that journal (`--state`), the
/// consumer run straight through and another one killed with SIGKILL twice and restarted.
@Suite(.serialized, .tags(.process))
struct PythonCSVExampleTests {
    static let script = PackagePaths.path("scripts/examples/events_to_csv.py")
    static let source = "sim:squat,seed=3,reps=8"

    /// The columns of a motion session's file, as scripts/examples/README.md documents them.
    static let motionColumns = [
        "stream", "sequence", "t", "type", "repNumber", "cleanCount", "hold", "peak", "start", "end",
        "duration", "faults", "isVisible", "missingJoints", "setupIssues", "value", "json",
    ]

    /// The clone's Python (the kinesia package and pyzmq: scripts/setup), as the other Python
    /// example tests.
    static func python() throws -> String { try PackagePaths.python() }

    /// One run of the consumer, its standard error in `DIR/NAME.err`.
    static func start(_ name: String, out: String, in topology: Topology, _ extra: [String] = []) throws
        -> TestProcess
    {
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        return try TestProcess(
            executable: try python(),
            arguments: [script, "--bus", topology.bus, "--out", out, "--from", "beginning"] + extra,
            environment: environment, standardError: topology.directory + "/\(name).err")
    }

    static func errors(_ name: String, in topology: Topology) -> String {
        TestProcess.readFile(topology.directory + "/\(name).err")
    }

    /// The records of a CSV text (RFC 4180: quoted fields, `""` for a quote, newlines in quotes).
    static func records(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var characters = text.makeIterator()
        var pending: Character? = nil
        while let character = pending ?? characters.next() {
            pending = nil
            if quoted {
                if character == "\"" {
                    let next = characters.next()
                    if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                record.append(field)
                field = ""
            } else if character == "\n" {
                record.append(field)
                records.append(record)
                record = []
                field = ""
            } else {
                field.append(character)
            }
        }
        return records
    }

    static func csv(_ directory: String, _ name: String) -> [[String]] {
        records(TestProcess.readFile(directory + "/" + name))
    }

    /// The rows a motion session's file must hold for `kinesia analyze`'s event lines, built
    /// from the decoded events (not from the Python code): numbers in the JSON's own form.
    static func expectedRows(_ lines: [String], stream: String) throws -> [[String]] {
        var reps = 0
        var clean = 0
        var holding = false
        return try lines.enumerated().map { index, line in
            let (t, event) = try MotionJSON.decodeEvent(line)
            var fields = [
                "stream": stream, "sequence": "\(index)", "t": JSONWriter.number(t), "type": event.name,
                "json": line,
            ]
            switch event {
            case .repCompleted(let rep), .repRejected(let rep):
                reps += 1
                if case .repCompleted = event { clean += 1 }
                fields["repNumber"] = "\(reps)"
                fields["cleanCount"] = "\(clean)"
                fields["hold"] = holding ? "true" : "false"
                holding = false
                fields["peak"] = JSONWriter.number(rep.peak)
                fields["start"] = JSONWriter.number(rep.start)
                fields["end"] = JSONWriter.number(rep.end)
                fields["duration"] = JSONWriter.number(rep.end - rep.start)
                fields["faults"] = rep.faults.map(\.rawValue).joined(separator: ";")
            case .holdStarted:
                holding = true
            case .formFault(let fault):
                fields["faults"] = fault.rawValue
            case .visibilityChanged(let visibility):
                fields["isVisible"] = visibility.isVisible ? "true" : "false"
                fields["missingJoints"] = visibility.missingJoints.map(\.rawValue).joined(separator: ";")
            case .setupChanged(let issues):
                fields["setupIssues"] = issues.map(\.rawValue).sorted().joined(separator: ";")
            case .baselineCompleted(let value):
                fields["value"] = JSONWriter.number(value)
            }
            return motionColumns.map { fields[$0] ?? "" }
        }
    }

    /// The Python unit tests of the rows and of the cursor read back from a file (also run by
    /// scripts/test), so that `swift test` fails when they do.
    @Test func thePythonUnitTestsOfTheRowsAndTheCursorPass() throws {
        let (status, output) = try TestProcess.run(
            try Self.python(),
            ["-m", "unittest", "discover", "-s", PackagePaths.path("scripts/examples"), "-p", "test_*.py"],
            environment: ProcessInfo.processInfo.environment)
        #expect(status == 0, "\(output)")
        #expect(output.contains("\nOK"), "\(output)")
    }

    @Test(.timeLimit(.minutes(5)))
    func theCSVsHoldAnalyzesEventsAndAConsumerKilledTwiceEndsWithTheSameFiles() async throws {
        let left = try await Oracle.events(source: Self.source, exercise: "squat", side: "left")
        let right = try await Oracle.events(source: Self.source, exercise: "squat", side: "right")
        #expect(left.filter { $0.contains("\"rep\":") }.count >= 6)

        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state"
        let steadyOut = topology.directory + "/steady"
        let crashingOut = topology.directory + "/crashing"
        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus)
        let steady = try Self.start("steady", out: steadyOut, in: topology)
        defer { if steady.isRunning { _ = steady.send(SIGKILL) } }
        var crashing = try Self.start("crashing-1", out: crashingOut, in: topology)
        let worker = try await topology.startWorker(
            "worker",
            [
                "--camera", "cam0", "--session", "left=squat:left", "--session", "right=squat:right",
                "--session", "analytics=squat:analytics", "--state", state,
            ])
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", Self.source, "--speed", "3", "--state", state])

        // Two SIGKILLs while the events come, each once the consumer has written more rows.
        func rows(_ directory: String) -> Int {
            ["cam0-left.csv", "cam0-right.csv", "cam0-analytics.csv"].map {
                max(0, Self.csv(directory, $0).count - 1)
            }.reduce(0, +)
        }
        var killedAt: [Int] = []
        for run in 2...3 {
            let target = (killedAt.last ?? 0) + 4
            let grew = await waitUntil(timeout: .seconds(60)) { rows(crashingOut) >= target }
            #expect(grew, "\(Self.errors("crashing-\(run - 1)", in: topology))\n\(topology.diagnostics)")
            killedAt.append(rows(crashingOut))
            _ = crashing.send(SIGKILL)
            #expect(await crashing.waitForExit(timeout: .seconds(60)) != nil)
            crashing = try Self.start("crashing-\(run)", out: crashingOut, in: topology)
        }
        defer { if crashing.isRunning { _ = crashing.send(SIGKILL) } }
        #expect(await ingest.waitForExit(timeout: .seconds(120)) == 0, "\(ingest.diagnostics)")

        // Both have every event the worker published before it stops (its replay endpoint goes
        // with it): the last sequence of each stream, as a heartbeat sent after the last pose
        // was analysed announces it. Its graceful stop then publishes the analytics' final set
        // summaries, live.
        let poses = try PoseCount.of(Self.source)
        let analysed = await health.wait(for: "worker", timeout: .seconds(60)) {
            $0.counters["poses"] == poses
        }
        let since = try #require(analysed, "\(topology.diagnostics)").uptime
        let announced = await health.wait(for: "worker") {
            $0.uptime > since + 1 && ($0.replay?.streams.count ?? 0) >= 3
        }
        let published = try #require(announced?.replay?.streams, "\(topology.diagnostics)")
        let streams = Dictionary(
            published.map { ($0.topic.string, $0.stream.description) },
            uniquingKeysWith: { first, _ in first })
        func lastSequence(_ directory: String, _ session: String) -> String? {
            Self.csv(directory, "cam0-\(session).csv").last?.dropFirst().first
        }
        let caughtUp = await waitUntil(timeout: .seconds(60)) {
            published.filter { $0.topic.kind == .event }.allSatisfy { stream in
                let session = stream.topic.string.split(separator: "/").last.map(String.init) ?? ""
                return [steadyOut, crashingOut].allSatisfy { lastSequence($0, session) == "\(stream.last)" }
            }
        }
        #expect(caughtUp, "\(Self.errors("crashing-3", in: topology))\n\(topology.diagnostics)")
        for directory in [steadyOut, crashingOut] {
            #expect(Self.csv(directory, "cam0-left.csv").count == left.count + 1)
            #expect(Self.csv(directory, "cam0-right.csv").count == right.count + 1)
        }
        let files = ["cam0-analytics.csv", "cam0-left.csv", "cam0-right.csv"]
        func contents(_ directory: String) -> [String] {
            files.map { TestProcess.readFile(directory + "/" + $0) }
        }
        // (b) Before the worker stops: the consumer killed twice holds the same bytes as the one
        // that ran through (a message sent after this, while the worker stops for good, can be
        // missed by one of them and not be fetched any more: its replay endpoint is gone).
        let same = await waitUntil(timeout: .seconds(30)) { contents(steadyOut) == contents(crashingOut) }
        #expect(same, "the files of the consumer killed twice differ from the steady one's")
        #expect(killedAt.count == 2 && killedAt[0] > 0 && killedAt[1] > killedAt[0], "\(killedAt)")
        for (file, (crashed, steadyText)) in zip(files, zip(contents(crashingOut), contents(steadyOut))) {
            #expect(!crashed.isEmpty && crashed == steadyText, "\(file)")
        }
        let before = contents(steadyOut)
        #expect(await worker.stop() == 0, "\(worker.diagnostics)")
        // Its graceful stop publishes the analytics' final set summaries, live; the files only grow.
        let settled = await waitUntil(timeout: .seconds(30)) {
            [steadyOut, crashingOut].contains { directory in
                let table = Self.csv(directory, "cam0-analytics.csv")
                let complete = table.first?.firstIndex(of: "complete") ?? 0
                return table.dropFirst().contains { $0.count > complete && $0[complete] == "true" }
            }
        }
        #expect(settled, "no final set summary after the worker stopped")
        for directory in [steadyOut, crashingOut] {
            for (now, then) in zip(contents(directory), before) {
                #expect(now.hasPrefix(then), "\(directory): a file changed before its end")
            }
        }
        try await Task.sleep(for: .seconds(1))  // nothing more may come
        _ = steady.send(SIGTERM)
        _ = crashing.send(SIGTERM)
        let steadyStatus = await steady.waitForExit(timeout: .seconds(60))
        #expect(steadyStatus == 0, "\(Self.errors("steady", in: topology))")
        let crashingStatus = await crashing.waitForExit(timeout: .seconds(60))
        #expect(crashingStatus == 0, "\(Self.errors("crashing-3", in: topology))")
        let steadyErrors = Self.errors("steady", in: topology)
        #expect(!steadyErrors.contains("Traceback") && !steadyErrors.contains("skipped"), "\(steadyErrors)")
        #expect(steadyErrors.contains("counters ") && !steadyErrors.contains("lost"), "\(steadyErrors)")

        // (a) Row for row what `kinesia analyze` gives, with the worker's stream and sequences.
        for (name, lines) in [("left", left), ("right", right)] {
            let table = Self.csv(steadyOut, "cam0-\(name).csv")
            #expect(table.first == Self.motionColumns, "\(name)")
            let stream = try #require(streams["event/cam0/\(name)/"], "no announced stream for \(name)")
            let expected = try Self.expectedRows(lines, stream: stream)
            #expect(Array(table.dropFirst()) == expected, "\(name)")
            for (row, wanted) in zip(table.dropFirst(), expected) where row != wanted {
                Issue.record("\(name): \(row) != \(wanted)")
                break
            }
        }
        // The analytics file: one repTempo row per rep of each side, with that rep's peak.
        let analytics = Self.csv(steadyOut, "cam0-analytics.csv")
        let header = try #require(analytics.first)
        let column = { (name: String) in header.firstIndex(of: name) ?? 0 }
        for (side, lines) in [("left", left), ("right", right)] {
            let peaks = lines.compactMap { try? MotionJSON.decodeEvent($0) }.compactMap {
                _, event -> String? in
                switch event {
                case .repCompleted(let rep), .repRejected(let rep): JSONWriter.number(rep.peak)
                default: nil
                }
            }
            let tempos = analytics.dropFirst().filter {
                $0[column("type")] == "repTempo" && $0[column("side")] == side
            }
            #expect(tempos.map { $0[column("peak")] } == peaks, "\(side)")
        }
        #expect(analytics.dropFirst().contains { $0[column("type")] == "repSymmetry" })

        for run in 1...3 {
            let text = Self.errors("crashing-\(run)", in: topology)
            #expect(!text.contains("Traceback") && !text.contains("lost"), "run \(run): \(text)")
        }
    }

    /// Hostile messages, a gap no replay can fill, a file that is not the consumer's and a torn
    /// last row: each is reported on standard error and counted, the consumer goes on, and the
    /// rows it writes are the valid events, once.
    @Test(.timeLimit(.minutes(2)))
    func badInputIsReportedAndCountedAndATornRowIsCutOnRestart() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let out = topology.directory + "/csv"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let foreign = "name,age\nann,3\n"
        try foreign.write(toFile: out + "/cam0-right.csv", atomically: true, encoding: .utf8)
        var consumer = try Self.start("bad-1", out: out, in: topology)
        defer { if consumer.isRunning { _ = consumer.send(SIGKILL) } }

        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try ZMQSocket(.pub, context: context)
        defer { socket.close() }
        try socket.connect(try BusAddress(parsing: topology.bus).publisherEndpoint)
        let stream = StreamID(0x00c0_ffee)
        func event(_ topic: String, _ sequence: UInt64, _ json: String) throws -> [[UInt8]] {
            [
                Array(topic.utf8),
                try JSONPayloadCodec.encode(
                    json: json,
                    header: WireHeader(kind: .event, streamID: stream, sequence: sequence, sentAt: 1)),
            ]
        }
        // Garbage until the consumer reports some: its subscription has reached the broker.
        let subscribed = await waitUntil(timeout: .seconds(30)) {
            _ = try? socket.trySend([Array("event/cam0/left/".utf8), [0x4b, 0x57, 0x09]])
            return Self.errors("bad-1", in: topology).contains("skipped: ")
        }
        try #require(subscribed, "\(Self.errors("bad-1", in: topology))")
        try socket.send(try event("event/cam0/left/", 0, #"{"type":"repCompleted","t":1}"#))
        try socket.send(try event("event/cam0/left/", 3, #"{"type":"holdStarted","t":3}"#))
        try socket.send(try event("event/cam0/left/", 4, #"{"type":"baselineCompleted","t":4,"value":87.5}"#))
        try socket.send([Array("event/cam0/left/".utf8)])
        try socket.send(try event("event/cam0/right/", 0, #"{"type":"holdStarted","t":1}"#))
        let left = out + "/cam0-left.csv"
        // Sequences 1 and 2 never come and no worker announces a replay endpoint: after the
        // announcement timeout they are reported lost, and 3 and 4 are written.
        let written = await waitUntil(timeout: .seconds(30)) { Self.csv(out, "cam0-left.csv").count == 3 }
        let errors = Self.errors("bad-1", in: topology)
        #expect(written, "\(errors)")
        #expect(errors.contains("skipped: event/cam0/left/ #0: rep is missing or not an object"), "\(errors)")
        #expect(errors.contains("lost: event/cam0/left/ stream 0000000000c0ffee: #1..<#3"), "\(errors)")
        #expect(errors.contains("skipped: frameCount"), "\(errors)")
        #expect(
            errors.contains("refused: \(out)/cam0-right.csv: its header is not events_to_csv's"), "\(errors)")
        #expect(TestProcess.readFile(out + "/cam0-right.csv") == foreign)
        _ = consumer.send(SIGTERM)
        #expect(await consumer.waitForExit(timeout: .seconds(60)) == 0)
        let counters = Self.errors("bad-1", in: topology).split(separator: "\n").last ?? ""
        #expect(counters.contains("rows=2") && counters.contains("exactlyOnce.lost=2"), "\(counters)")
        #expect(counters.contains("refused=1") && counters.contains("refusedEvents=1"), "\(counters)")
        #expect(!Self.errors("bad-1", in: topology).contains("Traceback"))
        #expect(Self.csv(out, "cam0-left.csv").dropFirst().map { $0[1] } == ["3", "4"])

        // A torn last row (a kill in the middle of a write) is cut at restart; delivery resumes
        // after the last complete row: 4 is not written again, 5 is.
        let complete = TestProcess.readFile(left)
        let handle = try #require(FileHandle(forWritingAtPath: left))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("0000000000c0ffee,5,5,holdSta".utf8))
        try handle.close()
        consumer = try Self.start("bad-2", out: out, in: topology)
        let resumed = await waitUntil(timeout: .seconds(30)) {
            for sequence: UInt64 in [4, 5] {
                _ = try? socket.trySend(
                    try event("event/cam0/left/", sequence, #"{"type":"holdStarted","t":5}"#))
            }
            return Self.csv(out, "cam0-left.csv").count == 4
        }
        #expect(resumed, "\(Self.errors("bad-2", in: topology))")
        try await Task.sleep(for: .milliseconds(500))
        let table = Self.csv(out, "cam0-left.csv")
        #expect(table.dropFirst().map { $0[1] } == ["3", "4", "5"])
        #expect(TestProcess.readFile(left).hasPrefix(complete))
        #expect(Self.errors("bad-2", in: topology).contains("cut a torn last row (28 bytes)"))
        _ = consumer.send(SIGTERM)
        #expect(await consumer.waitForExit(timeout: .seconds(60)) == 0)
    }

    /// Over TCP with CURVE: with a consumer key the broker allows, the files hold the events of
    /// `kinesia analyze`; with a key it does not allow, nothing; with no key, a refusal.
    @Test(.timeLimit(.minutes(3)))
    func overCURVEAnAllowedKeyGetsTheEventsAndAStrangerNothing() async throws {
        let right = try await Oracle.events(source: Self.source, exercise: "squat", side: "right")
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let refused = try Self.start("nokey", out: topology.directory + "/nokey", in: topology)
        #expect(await refused.waitForExit(timeout: .seconds(60)) == 1)
        #expect(
            Self.errors("nokey", in: topology).contains(
                "a TCP bus needs --key FILE.key and --server-key FILE.pub, or --insecure"))
        let allowed = try Self.start(
            "allowed", out: topology.directory + "/allowed", in: topology,
            ["--key", keys.secret(keys.consumer), "--server-key", keys.brokerPublic])
        defer { if allowed.isRunning { _ = allowed.send(SIGKILL) } }
        let stranger = try Self.start(
            "stranger", out: topology.directory + "/stranger", in: topology,
            ["--key", keys.secret(keys.stranger), "--server-key", keys.brokerPublic])
        defer { if stranger.isRunning { _ = stranger.send(SIGKILL) } }
        // The worker starts once the consumer says it is connected, and the stranger that it is
        // refused (what was published before comes by replay through the broker: the next test).
        let endpoint = try BusAddress(parsing: topology.bus).subscriberEndpoint
        let connected = await waitUntil(timeout: .seconds(30)) {
            Self.errors("allowed", in: topology).contains("connected to \(endpoint)")
        }
        #expect(connected, "\(Self.errors("allowed", in: topology))\n\(topology.diagnostics)")
        let refusal = await waitUntil(timeout: .seconds(30)) {
            Self.errors("stranger", in: topology).contains(
                "refused: the broker at \(endpoint) refused this key")
        }
        #expect(refusal, "\(Self.errors("stranger", in: topology))")
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "right=squat:right"])
        // No replay endpoint of the worker's own over CURVE (it would be outside the broker's
        // authentication): it announces the broker's replay port.
        let reporting = await health.wait(for: "worker") { _ in true }
        #expect(reporting != nil, "\(topology.diagnostics)")
        let port = try BusAddress(parsing: topology.bus).replayEndpoint
        #expect(reporting?.replay?.endpoint == port, "a replay endpoint of its own announced on a CURVE bus")
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", Self.source, "--pace", "max"])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let out = topology.directory + "/allowed"
        let complete = await waitUntil(timeout: .seconds(30)) {
            Self.csv(out, "cam0-right.csv").count == right.count + 1
        }
        #expect(complete, "\(Self.errors("allowed", in: topology))\n\(topology.diagnostics)")
        let rows = Array(Self.csv(out, "cam0-right.csv").dropFirst())
        let stream = try #require(rows.first?.first)
        #expect(rows == (try Self.expectedRows(right, stream: stream)))
        try await Task.sleep(for: .seconds(1))
        #expect(stranger.isRunning)
        #expect(
            ((try? FileManager.default.contentsOfDirectory(atPath: topology.directory + "/stranger")) ?? [])
                .isEmpty)
        #expect(!Self.errors("stranger", in: topology).contains("connected to"))
        _ = allowed.send(SIGTERM)
        #expect(await allowed.waitForExit(timeout: .seconds(60)) == 0)
        let errors = Self.errors("allowed", in: topology)
        #expect(
            !errors.contains("lost") && !errors.contains("Traceback") && !errors.contains("refused"),
            "\(errors)")
        #expect(errors.contains("rows=\(right.count)"), "\(errors)")
    }

    /// Over TCP with CURVE, started after the last event: every event from the beginning, by
    /// replay through the broker's replay port (a CURVE client with the consumer's key).
    @Test(.timeLimit(.minutes(3)))
    func overCURVEStartedAfterTheLastEventItGetsEveryEventThroughTheBroker() async throws {
        let right = try await Oracle.events(source: Self.source, exercise: "squat", side: "right")
        let (topology, keys) = try SecureBusTests.secureTopology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus, credentials: keys.credentials(keys.consumer))
        _ = try await topology.startWorker("worker", ["--camera", "cam0", "--session", "right=squat:right"])
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", "cam0", "--source", Self.source, "--pace", "max"])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let poses = try PoseCount.of(Self.source)
        let analysed = await health.wait(for: "worker") { $0.counters["poses"] == poses }
        #expect(analysed != nil, "\(topology.diagnostics)")
        let out = topology.directory + "/late"
        let late = try Self.start(
            "late", out: out, in: topology,
            ["--key", keys.secret(keys.consumer), "--server-key", keys.brokerPublic])
        defer { if late.isRunning { _ = late.send(SIGKILL) } }
        let complete = await waitUntil(timeout: .seconds(60)) {
            Self.csv(out, "cam0-right.csv").count == right.count + 1
        }
        #expect(complete, "\(Self.errors("late", in: topology))\n\(topology.diagnostics)")
        let rows = Array(Self.csv(out, "cam0-right.csv").dropFirst())
        let stream = try #require(rows.first?.first)
        #expect(rows == (try Self.expectedRows(right, stream: stream)))
        _ = late.send(SIGTERM)
        #expect(await late.waitForExit(timeout: .seconds(60)) == 0)
        let errors = Self.errors("late", in: topology)
        #expect(!errors.contains("lost") && !errors.contains("Traceback"), "\(errors)")
        let broker = await health.wait(for: "broker") {
            $0.counters["replay.entries", default: 0] >= right.count
        }
        #expect(broker != nil, "\(topology.diagnostics)")
    }
}
