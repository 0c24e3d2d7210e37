import Foundation
import KinesiaJournal
import KinesiaPublishJournal
import KinesiaWire
import Testing

/// The announcements of a publisher's journals: a stream's end comes from its writer, its first
/// record from the journal's segments, looked at again for one stream in ten at each
/// announcement, in turns, without reading the records written since.
struct JournalReplaySourceTests {
    @Test func retentionsNewFirstRecordIsAnnouncedWithinTenAnnouncementsOneStreamInTenAtATime() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-replay-source-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        // About 16 records a segment: 50 records make 4 segments a stream.
        let store = try JournalStore(
            directory: root + "/journal", policy: JournalPolicy(sync: .never, segmentBytes: 700))
        var current: [Topic: StreamID] = [:]
        for camera in 0..<20 {
            let topic = try Topic.snapshot(camera: "cam\(camera)", session: "left")
            let stream = StreamID(UInt64(camera + 1))
            current[topic] = stream
            let writer = try store.openWriter(for: JournalStream(topic: topic, streamID: stream))
            for sequence in UInt64(0)..<50 {
                try writer.append(sequence: sequence, frames: [[7], [1, 2, 3]])
            }
            try writer.flush()
        }
        let source = JournalReplaySource(store: store, current: current)
        source.lastJournaled = { _, _ in 49 }
        let before = source.streams()
        #expect(before.count == 20)
        #expect(before.allSatisfy { $0.first == 0 && $0.last == 49 })

        // Retention removes every stream's oldest segment.
        for (topic, stream) in current {
            let path = store.path(of: JournalStream(topic: topic, streamID: stream))
            let segments = try FileManager.default.contentsOfDirectory(atPath: path)
                .filter { $0.hasSuffix(".journal") }.sorted()
            try #require(segments.count >= 3)
            try FileManager.default.removeItem(atPath: path + "/" + segments[0])
        }
        var moved: Set<Topic> = []
        var movedEach: [Int] = []
        for _ in 0..<10 {
            let now = source.streams()
            #expect(now.count == 20)
            let newly = Set(now.filter { $0.first > 0 }.map(\.topic)).subtracting(moved)
            movedEach.append(newly.count)
            moved.formUnion(newly)
        }
        #expect(movedEach == Array(repeating: 2, count: 10), "streams looked at again per announcement")
        #expect(moved.count == 20)
        #expect(source.streams().allSatisfy { $0.first > 0 && $0.last == 49 })
    }

    /// The streams are announced in topic order, and a new run's stream (``setCurrent``) or a new
    /// topic takes its place in that order at the next announcement.
    @Test func streamsAreAnnouncedInTopicOrderAndFollowANewCurrentStream() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-replay-order-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try JournalStore(directory: root + "/journal", policy: JournalPolicy(sync: .never))
        func journal(_ topic: Topic, _ stream: StreamID) throws {
            let writer = try store.openWriter(for: JournalStream(topic: topic, streamID: stream))
            try writer.append(sequence: 0, frames: [[7], [1]])
            try writer.flush()
            writer.close()
        }
        let names = ["cam10", "cam2", "cam1", "cam0"]
        var current: [Topic: StreamID] = [:]
        for (index, camera) in names.enumerated() {
            let topic = try Topic.event(camera: camera, session: "left")
            current[topic] = StreamID(UInt64(index + 1))
            try journal(topic, StreamID(UInt64(index + 1)))
        }
        let source = JournalReplaySource(store: store, current: current)
        #expect(
            source.streams().map(\.topic.string) == [
                "event/cam0/left/", "event/cam1/left/", "event/cam10/left/", "event/cam2/left/",
            ])

        // A new run of cam1 and a new camera: both in place at the next announcement.
        let cam1 = try Topic.event(camera: "cam1", session: "left")
        try journal(cam1, StreamID(99))
        source.setCurrent(StreamID(99), for: cam1)
        let cam05 = try Topic.event(camera: "cam05", session: "left")
        try journal(cam05, StreamID(5))
        source.setCurrent(StreamID(5), for: cam05)
        let announced = source.streams()
        #expect(
            announced.map(\.topic.string) == [
                "event/cam0/left/", "event/cam05/left/", "event/cam1/left/", "event/cam10/left/",
                "event/cam2/left/",
            ])
        #expect(announced.first { $0.topic == cam1 }?.stream == StreamID(99))
    }
}
