import Foundation
import Glibc
import KinesiaStore
import KinesiaTestSupport
import KinesiaWire
import Testing

/// `kinesia record` loses nothing and doubles nothing across its own kill -9s and a worker's:
/// the same deployment (a broker, an ingest of a seeded simulation journaling with `--state`, a
/// worker with left, right and analytics sessions keeping its streams with `--state`, a
/// recorder) runs once without a fault and once with the recorder killed three times mid-run
/// (once together with the worker), each time started again on the same database; the two
/// databases must hold the same events, analytics records and snapshots, by topic, sequence
/// number and payload, each once.
@Suite(.serialized, .tags(.process))
struct RecordCrashTests {
    static let source = "sim:squat,seed=3,reps=20"
    static let sessions = [
        "--camera", "cam0", "--session", "left=squat:left", "--session", "right=squat:right",
        "--session", "analytics=squat:analytics",
    ]

    /// One row as a consumer identifies it, whatever the stream id of the run.
    struct Row: Hashable, Comparable, CustomStringConvertible {
        var table: String
        var topic: String
        var sequence: Int64
        var json: String

        static func < (lhs: Row, rhs: Row) -> Bool {
            (lhs.table, lhs.topic, lhs.sequence, lhs.json) < (rhs.table, rhs.topic, rhs.sequence, rhs.json)
        }

        var description: String { "\(table) \(topic) #\(sequence) \(json.prefix(120))" }
    }

    /// Every row of the three tables, and the number of stream ids per topic.
    static func contents(_ path: String) throws -> (rows: [Row], streamsPerTopic: [String: Int]) {
        let db = try SQLiteDatabase(path: path)
        defer { db.close() }
        var rows: [Row] = []
        var streams: [String: Set<Int64>] = [:]
        for table in ["events", "analytics", "snapshots"] {
            let statement = try db.prepare("SELECT topic, sequence, json, stream_id FROM \(table)")
            let read = try statement.rows([]) { row in
                (
                    Row(table: table, topic: row.text(0), sequence: row.integer(1), json: row.text(2)),
                    row.integer(3)
                )
            }
            for (row, stream) in read {
                rows.append(row)
                streams[row.topic, default: []].insert(stream)
            }
        }
        return (rows.sorted(), streams.mapValues(\.count))
    }

    /// Where each stream of the database stands: `topic stream` → last sequence.
    static func cursor(_ path: String) -> [String: UInt64] {
        guard let store = try? RecordStore(path: path) else { return [:] }
        defer { try? store.close() }
        var result: [String: UInt64] = [:]
        for row in (try? store.cursor()) ?? [] {
            result["\(row.topic) \(StreamID(rawValue: row.streamID))"] = row.lastSequence
        }
        return result
    }

    /// One run's processes: a broker, a recorder, a worker and an ingest that journal with
    /// `--state`; the recorder and the worker can be killed and started again.
    final class Deployment {
        let topology: Topology
        let database: String
        private(set) var recorder: KinesiaProcess?
        private(set) var worker: KinesiaProcess?
        private(set) var ingest: KinesiaProcess?
        private var starts = 0

        init(_ topology: Topology) {
            self.topology = topology
            database = topology.directory + "/record.sqlite"
        }

        func startRecorder() async throws {
            starts += 1
            let process = try topology.start(
                "record-\(starts)", ["record", "--db", database, "--camera", "cam0", "--name", "record"])
            #expect(await process.waitForError(containing: "recording"), "\(process.diagnostics)")
            recorder = process
        }

        func startWorker() async throws {
            starts += 1
            let process = try topology.start(
                "worker-\(starts)",
                ["worker", "--name", "worker"] + RecordCrashTests.sessions + [
                    "--state", topology.directory + "/worker-state",
                ])
            #expect(await process.waitForError(containing: "hosting"), "\(process.diagnostics)")
            worker = process
        }

        func kill(_ process: KinesiaProcess?) async {
            guard let process else { return }
            process.signal(SIGKILL)
            _ = await process.waitForExit()
        }

        /// Starts everything; the ingest plays the source at `speed` times its pace.
        func start(speed: Int = 2) async throws {
            _ = try await topology.startBroker()
            try await startRecorder()
            try await startWorker()
            ingest = try topology.start(
                "ingest",
                [
                    "ingest", "--camera", "cam0", "--source", RecordCrashTests.source, "--speed",
                    String(speed),
                    "--state", topology.directory + "/ingest-state", "--keep-serving",
                ])
        }

        /// The sum of the database's cursor: grows with every message stored.
        var progress: Int { RecordCrashTests.cursor(database).values.reduce(0) { $0 + Int($1) } }

        /// The end: the source played, every stream the worker announces stored up to its last
        /// message (two heartbeats in a row), the worker stopped gracefully (its analytics'
        /// final summaries), then the recorder.
        func finish() async throws {
            let ingest = try #require(ingest)
            #expect(
                await ingest.waitForError(
                    containing: "serving its poses through replay", timeout: .seconds(120)),
                "\(ingest.diagnostics)")
            let health = try HealthWatch(bus: topology.bus)
            var previous: [String: UInt64] = [:]
            let caughtUp = await health.wait(for: "worker", timeout: .seconds(90)) { report in
                var announced: [String: UInt64] = [:]
                for stream in report.replay?.streams ?? [] {
                    announced["\(stream.topic) \(stream.stream)"] = stream.last
                }
                defer { previous = announced }
                let stored = RecordCrashTests.cursor(database)
                return report.counters["catchingUp", default: 0] == 0 && announced.count == 5
                    && announced == previous && announced.allSatisfy { stored[$0.key] == $0.value }
            }
            #expect(caughtUp != nil, "the recorder did not catch up:\n\(topology.diagnostics)")
            let worker = try #require(worker)
            #expect(await worker.stop() == 0, "\(worker.diagnostics)")
            try await Task.sleep(for: .seconds(1))
            let recorder = try #require(recorder)
            #expect(await recorder.stop() == 0, "\(recorder.diagnostics)")
            #expect(recorder.errorText.contains(" 0 missing"), "\(recorder.diagnostics)")
            ingest.signal(SIGTERM)
            _ = await ingest.waitForExit()
        }
    }

    @Test(.timeLimit(.minutes(6)))
    func aRecorderKilledMidRunStoresWhatARunWithoutFaultsStores() async throws {
        let left = try await Oracle.events(source: Self.source, exercise: "squat", side: "left")
        let right = try await Oracle.events(source: Self.source, exercise: "squat", side: "right")
        #expect(left.count > 10 && right.count > 10)

        // A: no fault.
        let clean = try Topology()
        defer { clean.tearDown() }
        let a = Deployment(clean)
        try await a.start()
        try await a.finish()
        let expected = try Self.contents(a.database)

        // B: the recorder killed three times while the source plays, the second time together
        // with the worker; each time started again on the same database.
        let faulty = try Topology()
        defer { faulty.tearDown() }
        let b = Deployment(faulty)
        // At the source's own pace (the analysis depends on the poses, not on when they come):
        // twice the time for the three kills to fall before its end on a loaded machine (a CI
        // run reached the end first at twice the pace).
        try await b.start(speed: 1)
        for round in 1...3 {
            // Some progress first, so that each kill falls in the middle of the run.
            let before = b.progress
            let progressed = await waitUntil(timeout: .seconds(60)) { b.progress > before + 100 }
            #expect(progressed, "round \(round):\n\(faulty.diagnostics)")
            await b.kill(b.recorder)
            if round == 2 {
                await b.kill(b.worker)
                try await Task.sleep(for: .seconds(1))
                try await b.startWorker()
            }
            try await Task.sleep(for: .seconds(1))
            try await b.startRecorder()
            // It read its cursor back: every stream it had stored resumes after its last row.
            let restarted = try #require(b.recorder)
            #expect(restarted.errorText.contains("(resuming "), "\(restarted.diagnostics)")
        }
        #expect(
            b.ingest?.isRunning == true && !b.ingest!.errorText.contains("serving its poses"),
            "the kills came after the end of the source")
        try await b.finish()
        let actual = try Self.contents(b.database)

        // Equal, nothing twice, one stream per topic in each run.
        let missing = Set(expected.rows).subtracting(actual.rows).sorted()
        let extra = Set(actual.rows).subtracting(expected.rows).sorted()
        #expect(missing.isEmpty, "\(missing.count) rows missing after the kills, first: \(missing.prefix(5))")
        #expect(extra.isEmpty, "\(extra.count) rows not in the run without faults, first: \(extra.prefix(5))")
        #expect(actual.rows.count == expected.rows.count)
        for contents in [expected, actual] {
            let identities = contents.rows.map { "\($0.table) \($0.topic) \($0.sequence)" }
            #expect(Set(identities).count == identities.count, "a message stored twice")
            #expect(contents.streamsPerTopic.values.allSatisfy { $0 == 1 }, "\(contents.streamsPerTopic)")
        }
        // And the right rows: the events of `kinesia analyze`, the analytics, thinned snapshots.
        let events = { (rows: [Row], topic: String) in
            rows.filter { $0.table == "events" && $0.topic == topic }.sorted { $0.sequence < $1.sequence }
                .map(
                    \.json)
        }
        #expect(events(actual.rows, "event/cam0/left/") == left)
        #expect(events(actual.rows, "event/cam0/right/") == right)
        #expect(actual.rows.filter { $0.table == "analytics" }.count >= left.count + right.count)
        #expect(actual.rows.filter { $0.table == "snapshots" }.count > 50)
    }
}
