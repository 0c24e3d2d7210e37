import Foundation
import KinesiaBus
import KinesiaCLI
import KinesiaClient
import KinesiaTestSupport
import KinesiaWire
import Testing

/// The oracle: what `kinesia analyze --format json` prints for a source, without the summary.
enum Oracle {
    static func events(source: String, exercise: String, side: String) async throws -> [String] {
        try await run(source: source, exercise: exercise, side: side).events
    }

    /// The lines a session of a run (`kinesia session start`) publishes for `lines` of
    /// `kinesia analyze`: each ends with `"run":"RUN"`.
    static func inRun(_ lines: [String], _ run: UInt64) -> [String] {
        lines.map { $0.dropLast() + ",\"run\":\"\(run)\"}" }
    }

    /// The `"reps":[...]` of a summary line (what a run's `runEnded` holds too).
    static func reps(ofSummary summary: String) -> String {
        guard let start = summary.range(of: ",\"reps\":["), let end = summary.range(of: "],\"rejectedPoses\"")
        else { return "" }
        return String(
            summary[start.lowerBound..<end.upperBound].dropFirst().dropLast(",\"rejectedPoses\"".count))
    }

    /// The event lines and the summary line of `kinesia analyze --format json` (with `arguments`
    /// added: `--baseline 2`).
    static func run(source: String, exercise: String, side: String, arguments: [String] = []) async throws
        -> (
            events: [String], summary: String
        )
    {
        let directory = NSTemporaryDirectory() + "kinesia-oracle-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analyze = try KinesiaProcess(
            "analyze",
            ["analyze", source, "--exercise", exercise, "--side", side, "--format", "json"] + arguments,
            directory: directory)
        let status = await analyze.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(analyze.diagnostics)")
        var lines = analyze.outputLines
        #expect(lines.last?.hasPrefix("{\"type\":\"summary\"") == true)
        let summary = lines.removeLast()
        return (lines, summary)
    }
}

extension KinesiaProcess {
    /// Waits until standard output has at least `lines` lines and then nothing new for `quiet`:
    /// a listener that has everything, and nothing more on its way (a `--count` would stop it
    /// before an extra line could show).
    ///
    /// - Returns: Whether that happened before `timeout`.
    func waitForIdleOutput(
        lines: Int, quiet: Duration = .seconds(1), timeout: Duration = .seconds(30)
    ) async -> Bool {
        guard await waitForOutputLines(lines, timeout: timeout) else { return false }
        let clock = ContinuousClock()
        var size = output.utf8.count
        var since = clock.now
        return await waitUntil(timeout: timeout) {
            let now = output.utf8.count
            if now != size {
                size = now
                since = clock.now
            }
            return clock.now - since >= quiet
        }
    }
}

/// One line of `kinesia listen --format json`, split into the bus fields and the payload.
struct ListenedLine: Hashable {
    var topic: String
    var stream: String
    var seq: UInt64
    /// The payload's JSON object, exactly as the sender wrote it.
    var payload: String

    /// Parses `{"topic":"T","stream":"S","seq":N,REST` into its parts and `{REST`.
    init?(_ line: String) {
        guard
            let match = line.wholeMatch(
                of: /\{"topic":"([^"]*)","stream":"([0-9a-f]{16})","seq":([0-9]+),(.*)/),
            let seq = UInt64(match.3)
        else { return nil }
        topic = String(match.1)
        stream = String(match.2)
        self.seq = seq
        payload = "{" + match.4
    }

    /// The payloads of each topic, in order.
    static func byTopic(_ lines: [String]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for line in lines {
            guard let parsed = ListenedLine(line) else {
                Issue.record("not a listen JSON line: \(line)")
                continue
            }
            result[parsed.topic, default: []].append(parsed.payload)
        }
        return result
    }
}

/// Reads the health reports of the bus from the test process (KinesiaClient's subscriber).
final class HealthWatch {
    let context: ZMQContext
    let subscriber: BusSubscriber
    private(set) var latest: [String: HealthReport] = [:]

    /// - Parameter credentials: The keys of a CURVE bus (a consumer key and the broker's).
    init(bus: String, credentials: BusCredentials? = nil) throws {
        context = try ZMQContext()
        var address = try BusAddress(parsing: bus)
        address.credentials = credentials
        subscriber = try BusSubscriber(context: context, bus: address, prefixes: [.kind(.health)])
    }

    deinit {
        subscriber.close()
        context.terminate()
    }

    /// Waits until a report of `process` satisfies `condition`; returns it, or `nil` after
    /// `timeout`.
    ///
    /// Polls every 10 ms between `await`s instead of blocking in a receive: the tests run on
    /// the cooperative pool (one thread per core), and a thread blocked here for seconds holds
    /// up every other test.
    func wait(
        for process: String, timeout: Duration = .seconds(60), until condition: (HealthReport) -> Bool
    ) async -> HealthReport? {
        if let report = latest[process], condition(report) { return report }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            while let delivery = try? subscriber.tryReceive() {
                guard case .message(let message, _) = delivery, case .health(let report) = message.body
                else { continue }
                latest[report.process] = report
                if report.process == process, condition(report) { return report }
            }
            if clock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A source fed to ingest and analyze alike, with the exercise its sessions run.
struct BusSource: Sendable, CustomStringConvertible {
    var camera: String
    var spec: String
    var exercise: String

    var description: String { "\(camera) \(spec) \(exercise)" }

    /// Each recording with an exercise that judges reps on it (`kinesia analyze`: the right hip's
    /// raise on the balance recordings as hip flexion, the left leg's as hip abduction, one left
    /// and three right ankle reps while walking), so the comparisons are not of empty sets.
    static let recordings: [BusSource] = [
        BusSource(
            camera: "balance01op",
            spec: PackagePaths.path("data/recordings/p2s_balance_cam01_openpose25b.jsonl"),
            exercise: "hipFlexion"),
        BusSource(
            camera: "balance03op",
            spec: PackagePaths.path("data/recordings/p2s_balance_cam03_openpose25b.jsonl"),
            exercise: "hipFlexion"),
        BusSource(
            camera: "balance01mp",
            spec: PackagePaths.path("data/recordings/p2s_balance_cam01_mediapipe.jsonl"),
            exercise: "hipAbduction"),
        BusSource(
            camera: "walk", spec: PackagePaths.path("data/recordings/s2d_demo_walk_mediapipe.jsonl"),
            exercise: "ankleDorsiflexion"),
    ]
}

/// The README's Python consumer, `scripts/examples/listen_events.py` (pyzmq, `[topic, payload]`),
/// as a process of a test.
enum PythonExample {
    /// Starts it on `topology`'s bus, unbuffered, its standard output and error in files of the
    /// topology's directory: the process and the two paths.
    static func startListener(on topology: Topology) throws -> (TestProcess, output: String, errors: String) {
        let output = topology.directory + "/example.out"
        let errors = topology.directory + "/example.err"
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        let example = try TestProcess(
            executable: try PackagePaths.python(),
            arguments: [PackagePaths.path("scripts/examples/listen_events.py"), "--bus", topology.bus],
            environment: environment, standardOutput: output, standardError: errors)
        return (example, output, errors)
    }
}
