import Foundation
import Glibc
import KinesiaJournal
import KinesiaTestSupport
import KinesiaWire
import Testing

/// Real `kinesia` processes journaling into a state directory: the pose journal is the
/// recording that was sent, a worker killed with SIGKILL resumes its streams, its torn tail is
/// cut and reported.
@Suite(.tags(.process), .serialized)
struct JournalIntegrationTests {
    static let simulation = "sim:squat,seed=3"

    /// `kinesia analyze ARGUMENTS` in the topology's directory: its standard output.
    private func analyze(_ topology: Topology, _ name: String, _ arguments: [String]) async throws -> String {
        let process = try topology.start(name, ["analyze"] + arguments, addingBus: false)
        let status = await process.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(process.diagnostics)")
        return process.output
    }

    private func streams(_ state: String) throws -> [JournalStream] {
        try JournalStore(directory: state + "/journal").streams()
    }

    /// The JSON lines of the events journaled on `event/cam0/left/`.
    private func journaledEvents(_ state: String, stream: JournalStream) throws -> [(UInt64, String)] {
        let reader = try JournalReader(
            directory: state + "/journal/event+cam0+left/" + stream.streamDirectoryName)
        return try reader.allEntries().map { entry in
            #expect(entry.frames.first == Array("event/cam0/left/".utf8))
            return (entry.sequence, try JSONPayloadCodec.decode(entry.frames[1]).json)
        }
    }

    @Test func thePoseJournalAnalysesLikeTheSimulationAndTheWorkerJournalsItsEvents() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state-dir"
        _ = try await topology.startBroker()
        let worker = try await topology.startWorker(
            "worker", ["--camera", "cam0", "--session", "left=squat:left", "--state", state])
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", Self.simulation, "--pace", "max", "--state", state])
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 0, "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("new stream"), "\(ingest.diagnostics)")
        let expected = try await analyze(
            topology, "expected",
            [Self.simulation, "--exercise", "squat", "--side", "left", "--format", "json"])
        let fromJournal = try await analyze(
            topology, "journal",
            ["journal:\(state),camera=cam0", "--exercise", "squat", "--side", "left", "--format", "json"])
        #expect(fromJournal == expected)
        #expect(expected.contains("repCompleted"))

        // The worker journals its events before publishing them: the same lines as analyze's.
        let events = expected.split(separator: "\n").dropLast().filter { !$0.contains("\"frame\"") }.map(
            String.init)
        let done = await waitUntil(timeout: .seconds(60)) {
            (try? streams(state).first { $0.topic.kind == .event }).flatMap { stream in
                (try? journaledEvents(state, stream: stream))?.count
            } == events.count
        }
        #expect(done, "\(worker.diagnostics)")
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0, "\(worker.diagnostics)")
        let eventStream = try #require(try streams(state).first { $0.topic.kind == .event })
        let journaled = try journaledEvents(state, stream: eventStream)
        #expect(journaled.map(\.0) == Array(0..<UInt64(journaled.count)))
        #expect(journaled.map(\.1) == events)
        // Owner-only, all of it.
        var info = stat()
        _ = lstat(state, &info)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    /// SIGKILL in the middle of a run, a torn record left at the end of the event journal (as a
    /// write cut by a power cut leaves it): the restarted worker cuts it, says so, and resumes
    /// the same stream after its last good event.
    @Test func aWorkerKilledMidRunResumesItsStreamAndCutsATornTail() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state-dir"
        let session = [
            "--camera", "cam0", "--session", "left=squat:left", "--state", state, "--fsync", "always",
        ]
        _ = try await topology.startBroker()
        let first = try await topology.startWorker("worker", session)
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", Self.simulation, "--loop", "--speed", "8",
                "--state", state,
            ])
        // Some events journaled, then SIGKILL.
        let someEvents = await waitUntil(timeout: .seconds(30)) {
            guard let stream = try? streams(state).first(where: { $0.topic.kind == .event }) else {
                return false
            }
            return ((try? journaledEvents(state, stream: stream))?.count ?? 0) >= 3
        }
        #expect(someEvents, "\(first.diagnostics)\n\(ingest.diagnostics)")
        first.signal(SIGKILL)
        _ = await first.waitForExit()
        let stream = try #require(try streams(state).first { $0.topic.kind == .event })
        let before = try journaledEvents(state, stream: stream)
        // A torn record: the start of a valid one, cut short.
        let segments = try FileManager.default.contentsOfDirectory(
            atPath: state + "/journal/event+cam0+left/\(stream.streamDirectoryName)"
        )
        .filter { $0.hasSuffix(".journal") }.sorted()
        let last = state + "/journal/event+cam0+left/\(stream.streamDirectoryName)/" + segments.last!
        var record: [UInt8] = []
        try JournalRecord.encode(
            sequence: before.last!.0 + 1, frames: [Array("event/cam0/left/".utf8), [1, 2, 3, 4]],
            into: &record)
        let handle = try #require(FileHandle(forWritingAtPath: last))
        handle.seekToEndOfFile()
        handle.write(Data(record.prefix(record.count - 3)))
        try handle.close()

        let second = try await topology.startWorker("worker-again", session)
        #expect(
            second.errorText.contains("cut \(record.count - 3) bytes of a torn tail"), "\(second.diagnostics)"
        )
        #expect(
            second.errorText.contains("resuming stream \(stream.streamID) after event #\(before.last!.0)"),
            "\(second.diagnostics)")
        // The same stream goes on: new events follow the old ones' numbers, nothing torn is read.
        let more = await waitUntil(timeout: .seconds(30)) {
            ((try? journaledEvents(state, stream: stream))?.count ?? 0) > before.count
        }
        #expect(more, "\(second.diagnostics)\n\(ingest.diagnostics)")
        let after = try journaledEvents(state, stream: stream)
        #expect(Array(after.prefix(before.count).map(\.1)) == before.map(\.1))
        #expect(after.map(\.0) == Array(0..<UInt64(after.count)))
        #expect(try streams(state).filter { $0.topic.kind == .event } == [stream])
        // Reported on health/: a stream recovered, the bytes cut.
        // The restarted worker's report may not be out yet on a loaded machine: ask again.
        var status = try topology.start("status", ["status", "--wait", "2.5"])
        for attempt in 1...5 {
            #expect(await status.waitForExit(timeout: .seconds(60)) == 0, "\(status.diagnostics)")
            if status.output.contains("journalRecovered 1") || attempt == 5 { break }
            status = try topology.start("status-\(attempt)", ["status", "--wait", "2.5"])
        }
        #expect(status.output.contains("journalRecovered 1"), "\(status.output)")
        #expect(status.output.contains("journalCutBytes \(record.count - 3)"), "\(status.output)")
        ingest.signal(SIGTERM)
    }

    /// An ingest killed with SIGKILL and started again with the same source resumes its stream
    /// after the last pose journaled: the journal then holds every pose once, in order.
    @Test func anIngestKilledMidRunResumesAndItsJournalHoldsEveryPoseOnce() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        let state = topology.directory + "/state-dir"
        _ = try await topology.startBroker()
        let arguments = [
            "ingest", "--camera", "cam0", "--source", Self.simulation, "--speed", "4", "--wait-seconds", "0",
            "--state", state,
        ]
        let first = try topology.start("ingest", arguments)
        let some = await waitUntil(timeout: .seconds(30)) {
            guard let stream = try? streams(state).first,
                let reader = try? JournalReader(
                    directory: state + "/journal/pose+cam0/" + stream.streamDirectoryName)
            else { return false }
            return (reader.lastSequence ?? 0) > 100
        }
        #expect(some, "\(first.diagnostics)")
        first.signal(SIGKILL)
        _ = await first.waitForExit()
        let second = try topology.start("ingest-again", arguments)
        #expect(await second.waitForExit(timeout: .seconds(60)) == 0, "\(second.diagnostics)")
        #expect(second.errorText.contains("resuming stream"), "\(second.diagnostics)")
        #expect(try streams(state).count == 1, "one stream, resumed")
        let expected = try await analyze(
            topology, "expected",
            [Self.simulation, "--exercise", "squat", "--side", "left", "--format", "json"])
        let fromJournal = try await analyze(
            topology, "journal",
            ["journal:\(state)", "--exercise", "squat", "--side", "left", "--format", "json"])
        #expect(fromJournal == expected)
        // Its end ends the stream: the next start begins a new one.
        let third = try topology.start("ingest-third", arguments)
        #expect(await third.waitForExit(timeout: .seconds(60)) == 0, "\(third.diagnostics)")
        #expect(third.errorText.contains("new stream"), "\(third.diagnostics)")
    }
}
