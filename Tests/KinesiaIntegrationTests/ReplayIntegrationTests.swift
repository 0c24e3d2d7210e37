import Foundation
import Glibc
import KinesiaBus
import KinesiaClient
import KinesiaJournal
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

/// Exactly-once delivery with real processes: a worker keeps what it published and serves it
/// on its replay endpoint; consumers that start late or read slowly still get every event of
/// `kinesia analyze`, once, in order per session.
@Suite(.serialized, .tags(.process))
struct ReplayIntegrationTests {
    static let source = BusSource(
        camera: "sim", spec: "sim:shoulderAbduction,seed=7,reps=6", exercise: "shoulderAbduction")

    static func expected() async throws -> [String: [String]] {
        var expected: [String: [String]] = [:]
        for side in ["left", "right"] {
            expected["event/\(source.camera)/\(side)/"] = try await Oracle.events(
                source: source.spec, exercise: source.exercise, side: side)
        }
        return expected
    }

    /// Broker, a worker with a left and a right session, an ingest of the whole source; returns
    /// when the worker has analysed every pose, with the number of events it published.
    static func publishEverything(on topology: Topology) async throws -> Int {
        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker(
            "worker",
            ["left", "right"].flatMap { ["--session", "\(source.camera)/\($0)=\(source.exercise):\($0)"] })
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", source.camera, "--source", source.spec, "--pace", "max"])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        let poses = try PoseCount.of(source.spec)
        let report = await health.wait(for: "worker") { $0.counters["poses"] == poses }
        #expect(report != nil, "\(topology.diagnostics)")
        // The worker announces its replay endpoint and where its event streams stand.
        let announced = await health.wait(for: "worker") {
            ($0.replay?.streams.filter { $0.topic.kind == .event }.count ?? 0) == 2
        }
        #expect(announced?.replay?.endpoint.hasPrefix("ipc://\(topology.bus)/replay/") == true)
        return report?.counters["events"] ?? 0
    }

    /// Starts `listen event/ --from beginning` once every event is published, and expects it to
    /// print exactly `expected`, topic by topic, in order; returns it, stopped.
    static func expectLateListener(
        on topology: Topology, toGet expected: [String: [String]]
    ) async throws -> KinesiaProcess {
        let total = expected.values.map(\.count).reduce(0, +)
        let listener = try await topology.startListener(
            "late", ["event/", "--from", "beginning", "--format", "json"])
        let idle = await listener.waitForIdleOutput(lines: total, quiet: .seconds(3))
        #expect(idle, "late listener:\n\(topology.diagnostics)")
        #expect(await listener.stop() == 0, "\(listener.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)
        for (topic, lines) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(received[topic, default: []] == lines, "\(topic)")
        }
        #expect(listener.outputLines.count == total)
        return listener
    }

    @Test func aListenerStartedAfterTheLastEventGetsExactlyTheEventsOfAnalyzeFromTheBeginning() async throws {
        let expected = try await Self.expected()
        let total = expected.values.map(\.count).reduce(0, +)
        #expect(total > 10)
        let topology = try Topology()
        defer { topology.tearDown() }
        let published = try await Self.publishEverything(on: topology)
        #expect(published == total)

        // Every event was published before this listener existed: all of it comes by replay.
        _ = try await Self.expectLateListener(on: topology, toGet: expected)

        // From now: nothing of the past is printed.
        let now = try await topology.startListener(
            "now", ["event/", "--from", "now", "--format", "json", "--idle", "3"])
        #expect(await now.waitForExit(timeout: .seconds(60)) == 0, "\(now.diagnostics)")
        #expect(now.outputLines.isEmpty)
    }

    /// A flipped byte in the middle of the worker's event journal (a bad disk block): the
    /// damaged event is never served, and a listener from the beginning reports it lost once and
    /// prints every other event, in order, instead of asking for it for ever.
    @Test func aDamagedJournalRecordIsReportedLostOnceAndEveryOtherEventIsPrinted() async throws {
        let expected = try await Self.expected()
        let total = expected.values.map(\.count).reduce(0, +)
        let topology = try Topology()
        defer { topology.tearDown() }
        #expect(try await Self.publishEverything(on: topology) == total)
        let health = try HealthWatch(bus: topology.bus)

        // The left session's event journal, in the default state directory of the test.
        let state = topology.directory + "/state"
        let files = FileManager.default.enumerator(atPath: state)?.compactMap { $0 as? String } ?? []
        let segment = try #require(
            files.first { $0.contains("event+\(Self.source.camera)+left/") && $0.hasSuffix(".journal") },
            "\(files)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: state + "/" + segment)))
        let scan = bytes.withUnsafeBytes { SegmentScan($0) }
        let left = "event/\(Self.source.camera)/left/"
        #expect(scan.records.count == expected[left]?.count)
        let damaged = scan.records[scan.records.count / 2]
        // One byte flipped in place, as a bad block does (never a rewrite of the whole file,
        // which would empty it for a moment under the worker's reader).
        let flipped = damaged.offset + damaged.size - 2
        let handle = try #require(FileHandle(forUpdatingAtPath: state + "/" + segment))
        try handle.seek(toOffset: UInt64(flipped))
        try handle.write(contentsOf: [bytes[flipped] ^ 0x5A])
        try handle.close()

        let listener = try await topology.startListener(
            "late", ["event/", "--from", "beginning", "--format", "json"])
        let idle = await listener.waitForIdleOutput(lines: total - 1, quiet: .seconds(3))
        // Stopped first: its counters (requests, retries, lost) are in what a failure shows,
        // with the worker's replay counters.
        let status = await listener.stop()
        let worker = await health.wait(for: "worker", timeout: .seconds(2)) { _ in true }
        #expect(
            idle,
            "late listener:\n\(topology.diagnostics)\nworker: \(String(describing: worker?.counters.sorted { $0.key < $1.key }))"
        )
        #expect(status == 0, "\(listener.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)
        var leftExpected = expected[left] ?? []
        leftExpected.remove(at: Int(damaged.sequence))
        #expect(received[left, default: []] == leftExpected)
        let right = "event/\(Self.source.camera)/right/"
        #expect(received[right, default: []] == expected[right])
        let lost = "#\(damaged.sequence)..<#\(damaged.sequence + 1) cannot be had any more"
        #expect(listener.errorText.components(separatedBy: lost).count == 2, "\(listener.diagnostics)")
    }

    @Test func aSlowConsumerCatchesUpByReplayWithoutSlowingAFastOneOrBlockingThePublishers() async throws {
        let expected = try await Self.expected()
        let total = expected.values.map(\.count).reduce(0, +)
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let fast = try await topology.startListener("fast", ["event/", "--format", "json"])
        let health = try HealthWatch(bus: topology.bus)
        _ = try await topology.startWorker(
            "worker",
            ["left", "right"].flatMap {
                ["--session", "\(Self.source.camera)/\($0)=\(Self.source.exercise):\($0)"]
            })

        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", Self.source.camera, "--source", Self.source.spec, "--pace", "max"])
        // The slow consumer starts once events are out (what it missed comes by replay) and
        // reads one message, then sleeps a second, for its first five messages; its subscriber
        // holds at most 16 messages and one value waits for it.
        let started = await health.wait(for: "worker") { ($0.counters["events"] ?? 0) > 0 }
        #expect(started != nil, "\(topology.diagnostics)")
        let bus = try BusAddress(parsing: topology.bus)
        let slow = Task {
            var received: [String: [String]] = [:]
            var count = 0
            var gaps: [BusGap] = []
            let messages = ExactlyOnceMessages(
                bus: bus, topics: [.kind(.event)], from: .beginning, bufferLimit: 1, highWaterMark: 16)
            for try await message in messages {
                switch message {
                case .event(let event):
                    received[event.topic.string, default: []].append(
                        MotionJSON.encode(event.event, at: event.t))
                    count += 1
                case .gap(let gap): gaps.append(gap)
                default: break
                }
                if count <= 5 { try await Task.sleep(for: .seconds(1)) }
                if count == total { break }
            }
            return (received, gaps)
        }
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")

        // The fast listener gets every event, whatever the slow one does.
        let fastDone = await fast.waitForIdleOutput(lines: total, quiet: .seconds(1), timeout: .seconds(30))
        #expect(fastDone, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(fast.outputLines)
        for (topic, lines) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(received[topic, default: []] == lines, "fast \(topic)")
        }

        let result = try await withThrowingTaskGroup(of: ([String: [String]], [BusGap])?.self) { group in
            group.addTask { try await slow.value }
            group.addTask {
                try await Task.sleep(for: .seconds(90))
                slow.cancel()
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let (slowReceived, gaps) = try #require(
            result, "the slow consumer did not finish:\n\(topology.diagnostics)")
        #expect(gaps.isEmpty, "\(gaps)")
        for (topic, lines) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(slowReceived[topic, default: []] == lines, "slow \(topic)")
        }
        // The worker never waited and never failed a publish: publishers drop-and-detect, the
        // slow consumer fetched its share by replay.
        let report = await health.wait(for: "worker") { ($0.counters["replay.served"] ?? 0) > 0 }
        #expect(report != nil, "no replay was served:\n\(topology.diagnostics)")
        #expect((report?.counters["publishFailures"] ?? 0) == 0, "\(String(describing: report))")
    }

    @Test func thePythonExampleStartedLateGetsExactlyTheEventsOfAnalyzeFromTheBeginning() async throws {
        let python = try PackagePaths.python()
        let expected = try await Self.expected()
        let total = expected.values.map(\.count).reduce(0, +)
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await Self.publishEverything(on: topology)

        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        let output = topology.directory + "/example.out"
        let errors = topology.directory + "/example.err"
        let example = try TestProcess(
            executable: python,
            arguments: [
                PackagePaths.path("scripts/examples/listen_exactly_once.py"), "--bus", topology.bus, "--from",
                "beginning", "--cursor", topology.directory + "/cursor.txt",
            ], environment: environment, standardOutput: output, standardError: errors)
        defer { if example.isRunning { example.send(SIGKILL) } }
        let printed = { TestProcess.readFile(output).split(separator: "\n").map(String.init) }
        let all = await waitUntil(timeout: .seconds(30)) { printed().count >= total }
        #expect(all, "\(TestProcess.readFile(errors))")
        try await Task.sleep(for: .seconds(2))  // nothing more may come
        example.send(SIGTERM)
        _ = await example.waitForExit(timeout: .seconds(60))
        var received: [String: [String]] = [:]
        var sequences: [String: [UInt64]] = [:]
        for line in printed() {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            try #require(parts.count == 3, "\(line)")
            received[parts[0], default: []].append(parts[2])
            sequences[parts[0], default: []].append(UInt64(parts[1]) ?? .max)
        }
        for (topic, lines) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(received[topic, default: []] == lines, "\(topic)")
            #expect(sequences[topic, default: []] == Array(0..<UInt64(lines.count)), "\(topic)")
        }
        #expect(!TestProcess.readFile(errors).contains("Traceback"), "\(TestProcess.readFile(errors))")

        // Stopped by SIGTERM, it saved where it stands: the last sequence printed per stream. A
        // second run from that cursor prints nothing again.
        let cursor = Set(TestProcess.readFile(topology.directory + "/cursor.txt").split(separator: "\n"))
        #expect(cursor.count == expected.count, "\(cursor)")
        for (topic, lines) in expected {
            #expect(
                cursor.contains { $0.hasPrefix(topic + " ") && $0.hasSuffix(" \(lines.count - 1)") },
                "\(cursor)")
        }
        let again = try TestProcess(
            executable: python,
            arguments: [
                PackagePaths.path("scripts/examples/listen_exactly_once.py"), "--bus", topology.bus, "--from",
                "beginning", "--cursor", topology.directory + "/cursor.txt",
            ], environment: environment, standardOutput: output + ".2", standardError: errors + ".2")
        defer { if again.isRunning { again.send(SIGKILL) } }
        try await Task.sleep(for: .seconds(4))
        again.send(SIGTERM)
        #expect(await again.waitForExit(timeout: .seconds(60)) == 0, "\(TestProcess.readFile(errors + ".2"))")
        #expect(TestProcess.readFile(output + ".2") == "", "printed again after its cursor")
    }
}
