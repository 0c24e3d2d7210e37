import Foundation
import KinesiaClient
import KinesiaMotion
import KinesiaStore
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaRecorder

/// `kinesia record`'s cursor and transactions, with no socket: an ``ExactlyOnceStateMachine``
/// fed by a simulated worker (its messages, its heartbeats, its replay answers) drives a
/// ``RecordWriter`` that is "killed" at random moments (dropped with its transaction open, as
/// kill -9 leaves it) and opened again on the same file. The database must end up holding
/// exactly the rows of a run without a fault.
struct RecordWriterTests {
    static let endpoint = "ipc:///simulated/replay/worker.sock"
    static let sessions: [(name: String, stream: StreamID)] = [
        ("left", StreamID(rawValue: 0x51)), ("right", StreamID(rawValue: 0x52)),
    ]

    /// A path in a fresh temporary folder, removed by `done`.
    static func temporaryDatabase(_ name: String) throws -> (path: String, done: () -> Void) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-record-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder.appendingPathComponent(name).path, { try? FileManager.default.removeItem(at: folder) })
    }

    /// What the simulated worker publishes, in order: per session, a snapshot every pose (the
    /// recorder thins them), an event every tenth pose, a rep (a count change) every 40th.
    static func published(poses: Int = 400) throws -> [WireMessage] {
        var messages: [WireMessage] = []
        var next: [Topic: UInt64] = [:]
        func add(_ topic: Topic, _ stream: StreamID, _ kind: PayloadKind, _ body: WireMessage.Body) {
            let sequence = next[topic, default: 0]
            next[topic] = sequence + 1
            messages.append(
                WireMessage(
                    topic: topic,
                    header: WireHeader(kind: kind, streamID: stream, sequence: sequence, sentAt: 0),
                    body: body))
        }
        for pose in 0..<poses {
            for (index, session) in sessions.enumerated() {
                let t = Double(pose) / 30 + Double(index) * 0.001
                var snapshot = MotionSnapshot()
                snapshot.repCount = pose / 40
                snapshot.value = Double(pose % 40) * 2
                if pose % 10 == 5 {
                    let event: MotionEvent =
                        pose % 40 == 35
                        ? .repCompleted(Rep(peak: 80 + Double(pose % 7), faults: [], start: t - 1, end: t))
                        : .holdStarted
                    add(
                        try .event(camera: "cam0", session: session.name), session.stream, .event,
                        .event(json: MotionJSON.encode(event, at: t)))
                }
                add(
                    try .snapshot(camera: "cam0", session: session.name), session.stream, .snapshot,
                    .snapshot(json: MotionJSON.encode(snapshot, at: t)))
            }
        }
        return messages
    }

    /// Every row of the database's tables, as text: `table topic stream sequence json`, sorted;
    /// and the cursor rows.
    static func contents(_ path: String) throws -> (rows: [String], cursor: [String]) {
        let db = try SQLiteDatabase(path: path)
        defer { db.close() }
        var rows: [String] = []
        for table in ["events", "snapshots", "analytics"] {
            rows += try db.prepare("SELECT topic, stream_id, sequence, json FROM \(table)").rows {
                "\(table) \($0.text(0)) \($0.integer(1)) \($0.integer(2)) \($0.text(3))"
            }
        }
        let cursor = try db.prepare("SELECT topic, stream_id, last_sequence FROM streams").rows {
            "\($0.text(0)) \($0.integer(1)) \($0.integer(2))"
        }
        return (rows.sorted(), cursor.sorted())
    }

    /// A recorder process: its writer and the exactly-once machine of its subscriber.
    struct RecorderProcess {
        var writer: RecordWriter
        var machine: ExactlyOnceStateMachine<WireMessage>

        init(path: String, now: Duration) throws {
            writer = try RecordWriter(path: path, snapshotInterval: 0.2, now: now)
            machine = ExactlyOnceStateMachine(
                start: .beginning, cursor: writer.cursor, accepts: [.kind(.event), .kind(.snapshot)])
        }
    }

    /// Plays `messages` to a recorder on `path`: each is delivered live unless the recorder is
    /// down (or with probability `loss`); the recorder is killed after each message with
    /// probability `crash` and stays down for 1-60 messages. The worker's heartbeat (every 25
    /// messages) and its replay server (everything published so far) fill the holes.
    static func play(
        _ messages: [WireMessage], into path: String, crash: Double, loss: Double, seed: UInt64
    ) throws -> (crashes: Int, recorder: Recorder) {
        var random = SplitMix64(seed: seed)
        var now = Duration.zero
        var process: RecorderProcess? = try RecorderProcess(path: path, now: now)
        var downFor = 0
        var crashes = 0
        var published = 0

        func announcement() -> ReplayAnnouncement {
            var last: [ReplayStreamKey: UInt64] = [:]
            for message in messages.prefix(published) {
                last[ReplayStreamKey(topic: message.topic, stream: message.header.streamID)] =
                    message.header.sequence
            }
            return ReplayAnnouncement(
                endpoint: endpoint,
                streams: last.keys.sorted().map {
                    ReplayStreamInfo(topic: $0.topic, stream: $0.stream, first: 0, last: last[$0]!)
                })
        }
        /// Performs the machine's actions: deliveries go to the writer, requests are answered
        /// at once from what was published so far.
        func perform(
            _ actions: [ExactlyOnceStateMachine<WireMessage>.Action], _ process: inout RecorderProcess
        )
            throws
        {
            var queue = actions
            while !queue.isEmpty {
                let action = queue.removeFirst()
                switch action {
                case .deliver(_, _, let message):
                    _ = try process.writer.handle(.message(message), now: now)
                case .lost(let key, let sequences):
                    _ = try process.writer.handle(.lost(topic: key.topic, sequences: sequences), now: now)
                case .request(_, let request):
                    let stream = messages.prefix(published).filter {
                        $0.topic == request.topic && $0.header.streamID == request.stream
                    }
                    let entries = stream.filter { $0.header.sequence >= request.from }.prefix(
                        Int(request.limit))
                    for entry in entries {
                        queue += process.machine.received(
                            ReplayStreamKey(topic: entry.topic, stream: entry.header.streamID),
                            sequence: entry.header.sequence, message: entry, live: false, now: now)
                    }
                    let last = stream.last?.header.sequence ?? 0
                    queue += process.machine.replayEnded(
                        ReplayBatchEnd(
                            requestID: request.requestID, stream: request.stream!, first: 0, last: last,
                            next: (entries.last?.header.sequence).map { $0 + 1 } ?? request.from,
                            count: UInt32(entries.count)), now: now)
                }
            }
        }

        for message in messages {
            published += 1
            now += .milliseconds(10)
            if var running = process {
                if Double.random(in: 0..<1, using: &random) >= loss {
                    let key = ReplayStreamKey(topic: message.topic, stream: message.header.streamID)
                    try perform(
                        running.machine.received(
                            key, sequence: message.header.sequence, message: message, live: true, now: now),
                        &running)
                }
                if published % 25 == 0 {
                    try perform(running.machine.announced(announcement(), now: now), &running)
                }
                try running.writer.commitIfDue(now: now)
                if Double.random(in: 0..<1, using: &random) < crash {
                    // kill -9: the open transaction is never committed.
                    process = nil
                    crashes += 1
                    downFor = Int.random(in: 1...60, using: &random)
                } else {
                    process = running
                }
            } else {
                downFor -= 1
                if downFor <= 0 { process = try RecorderProcess(path: path, now: now) }
            }
        }
        // The end: the recorder is up, the worker's heartbeats go on until it has caught up.
        var running = try process ?? RecorderProcess(path: path, now: now)
        for _ in 0..<5 {
            now += .seconds(1)
            try perform(running.machine.announced(announcement(), now: now), &running)
        }
        try running.writer.close()
        return (crashes, running.writer.recorder)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aRecorderKilledAtRandomMomentsStoresExactlyTheRowsOfARunWithoutFaults(seed: UInt64) throws {
        let messages = try Self.published()
        let (reference, doneReference) = try Self.temporaryDatabase("reference.sqlite")
        defer { doneReference() }
        let clean = try Self.play(messages, into: reference, crash: 0, loss: 0, seed: seed)
        #expect(clean.crashes == 0)
        let expected = try Self.contents(reference)
        // Every event; snapshots thinned (at most every 0.2 s of pose time, and each count change).
        #expect(expected.rows.filter { $0.hasPrefix("events ") }.count == 2 * 40)
        let snapshots = expected.rows.filter { $0.hasPrefix("snapshots ") }.count
        #expect(snapshots > 2 * 400 / 7 && snapshots < 2 * 400 / 5, "\(snapshots)")
        #expect(clean.recorder.snapshotsSkipped == 2 * 400 - snapshots)

        let (faulty, doneFaulty) = try Self.temporaryDatabase("faulty.sqlite")
        defer { doneFaulty() }
        let run = try Self.play(messages, into: faulty, crash: 0.01, loss: 0.05, seed: seed)
        #expect(run.crashes >= 3, "seed \(seed): only \(run.crashes) crashes")
        let actual = try Self.contents(faulty)
        let missing = Set(expected.rows).subtracting(actual.rows).sorted()
        let extra = Set(actual.rows).subtracting(expected.rows).sorted()
        #expect(missing.isEmpty, "seed \(seed): \(missing.count) rows missing, first \(missing.prefix(3))")
        #expect(extra.isEmpty, "seed \(seed): \(extra.count) rows too many, first \(extra.prefix(3))")
        #expect(actual.rows.count == expected.rows.count)
        #expect(actual.cursor == expected.cursor)
        #expect(run.recorder.missing == 0)
    }

    /// The snapshot thinning taken up from the database gives the decisions of a recorder that
    /// never stopped.
    @Test func theThinningRestoredFromTheLastKeptSnapshotDecidesAsWithoutARestart() throws {
        let messages = try Self.published(poses: 120).map {
            BusMessage.messages(from: .message($0, .inOrder))[0]
        }
        var whole = Recorder(snapshotInterval: 0.2)
        let expected = messages.map { whole.decide($0) }
        for cut in [1, 17, 60, 151, 239] {
            var first = Recorder(snapshotInterval: 0.2)
            var decisions = messages.prefix(cut).map { first.decide($0) }
            // What the database holds of the first part: each stream's last kept snapshot.
            var kept: [RecordStore.Key: RecordStore.KeptSnapshot] = [:]
            for case .store(.snapshot(let t, let snapshot), let key) in decisions.compactMap({ $0 }) {
                var stream = key
                stream.sequence = 0
                kept[stream] = RecordStore.KeptSnapshot(
                    topic: key.topic, streamID: key.streamID, sequence: key.sequence, t: t,
                    repCount: snapshot.repCount, rejectedCount: snapshot.rejectedCount)
            }
            var second = Recorder(snapshotInterval: 0.2, restoring: Array(kept.values))
            decisions += messages.dropFirst(cut).map { second.decide($0) }
            #expect(decisions == expected, "cut after \(cut)")
        }
    }

    /// Messages that no replay can give back are counted and logged; recording goes on.
    @Test func messagesThatCannotBeHadAreCountedAndLoggedNeverFatal() throws {
        let (path, done) = try Self.temporaryDatabase("lost.sqlite")
        defer { done() }
        let writer = try RecordWriter(path: path, snapshotInterval: 0.2, now: .zero)
        let warnings = try writer.handle(
            .lost(topic: try .event(camera: "cam0", session: "left"), sequences: 3..<7), now: .zero)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("event/cam0/left/: #3..<#7 cannot be had any more") == true)
        #expect(writer.recorder.counters["gaps"] == 4)
        let message = try Self.published(poses: 6).first { $0.topic.kind == .event }!
        #expect(try writer.handle(.message(message), now: .seconds(1)).isEmpty)
        try writer.close()
        #expect(try Self.contents(path).rows.count == 1)
    }

    /// The stored cursor is what the subscriber resumes from: rows with a topic that does not
    /// read or a zero stream id are left out.
    @Test func theStoredCursorBecomesTheSubscribersCursor() throws {
        let cursor = RecordWriter.replayCursor([
            RecordStore.Cursor(topic: "event/cam0/left/", streamID: 0x51, lastSequence: 41),
            RecordStore.Cursor(topic: "snapshot/cam0/left/", streamID: 0x51, lastSequence: 700),
            RecordStore.Cursor(topic: "not a topic", streamID: 0x51, lastSequence: 1),
            RecordStore.Cursor(topic: "event/cam0/right/", streamID: 0, lastSequence: 1),
        ])
        #expect(
            cursor.description
                == "event/cam0/left/ 0000000000000051 41\nsnapshot/cam0/left/ 0000000000000051 700\n")
    }
}
