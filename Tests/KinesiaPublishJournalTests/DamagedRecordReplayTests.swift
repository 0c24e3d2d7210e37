import Foundation
import KinesiaClient
import KinesiaJournal
import KinesiaPublishJournal
import KinesiaWire
import Testing

/// A consumer replaying a journal with a damaged record gets every other record and the damaged
/// one reported lost once, whenever the server's reader last looked at the file.
struct DamagedRecordReplayTests {
    /// Replays everything of `stream` through `source` with a consumer's state machine, as the
    /// replay server and an exactly-once listener would; returns what was delivered and lost.
    static func replayEverything(
        from source: JournalReplaySource, topic: Topic, stream: StreamID
    ) -> (delivered: [UInt64], lost: [Range<UInt64>]) {
        var machine = ExactlyOnceStateMachine<[[UInt8]]>(start: .beginning, accepts: [.everything])
        var delivered: [UInt64] = []
        var lost: [Range<UInt64>] = []
        var queue = machine.announced(
            ReplayAnnouncement(endpoint: "ipc://replay", streams: source.streams()), now: .zero)
        var rounds = 0
        while !queue.isEmpty, rounds < 100 {
            rounds += 1
            let action = queue.removeFirst()
            switch action {
            case .deliver(_, let sequence, _): delivered.append(sequence)
            case .lost(_, let sequences): lost.append(sequences)
            case .request(_, let request):
                let (replies, _) = ReplayResponder.answer(request.encoded(), from: source)
                for reply in replies {
                    switch reply {
                    case .entry(let entry):
                        queue += machine.received(
                            ReplayStreamKey(topic: topic, stream: stream), sequence: entry.sequence,
                            message: entry.frames, live: false, now: .zero)
                    case .end(let end): queue += machine.replayEnded(end, now: .zero)
                    case .error(let failure): queue += machine.replayFailed(failure, now: .zero)
                    }
                }
            }
        }
        return (delivered, lost)
    }

    @Test(arguments: [0, 2, 4, 8])
    func aRecordDamagedAfterTheReaderLookedIsSkippedAndReportedLostOnce(scannedBefore: Int) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-damaged-replay-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try JournalStore(directory: root + "/journal", policy: JournalPolicy(sync: .never))
        let topic = try Topic.event(camera: "sim", session: "left")
        let stream = StreamID(9)
        let journal = JournalStream(topic: topic, streamID: stream)
        let writer = try store.openWriter(for: journal)
        let source = JournalReplaySource(store: store, current: [topic: stream])
        var written: UInt64?
        source.lastJournaled = { _, _ in written }
        for sequence in UInt64(0)..<8 {
            if sequence == scannedBefore {
                // The server's reader looks at the journal (a heartbeat) while it is written.
                try writer.flush()
                _ = source.streams()
            }
            try writer.append(
                sequence: sequence, frames: [[7], Array(repeating: UInt8(sequence), count: 40)])
            written = sequence
        }
        try writer.flush()

        // A flipped byte in record 4 (a bad disk block).
        let path = store.path(of: journal)
        let segment = try #require(
            try FileManager.default.contentsOfDirectory(atPath: path).first { $0.hasSuffix(".journal") })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + "/" + segment)))
        let scan = bytes.withUnsafeBytes { SegmentScan($0) }
        let damaged = try #require(scan.records.first { $0.sequence == 4 })
        bytes[damaged.offset + damaged.size - 2] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + segment))

        let (delivered, lost) = Self.replayEverything(from: source, topic: topic, stream: stream)
        #expect(delivered == [0, 1, 2, 3, 5, 6, 7])
        #expect(lost == [4..<5])
    }
}
