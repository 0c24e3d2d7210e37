import Foundation
import Glibc
import KinesiaJournal
import KinesiaWire

/// Temporary stores and recognisable records for the journal tests.
enum JournalFixtures {
    /// A new private directory (`mkdtemp`, mode 0700); remove it with ``remove(_:)``.
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/kinesia-journal-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        precondition(made, "mkdtemp failed")
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs `body` with a store of `policy` in a new temporary directory (and that directory),
    /// removed afterwards.
    static func withStore(
        _ policy: JournalPolicy = JournalPolicy(sync: .never), _ body: (JournalStore, String) throws -> Void
    ) throws {
        let root = temporaryDirectory()
        defer { remove(root) }
        let store = try JournalStore(directory: root + "/state/journal", policy: policy)
        try body(store, root)
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    static let stream = JournalStream(
        topic: try! Topic.pose(camera: "cam0"), streamID: StreamID(0x1234_5678_9abc_def0))

    /// The frames of message `sequence`: a topic and a payload whose bytes say the sequence.
    static func frames(_ sequence: UInt64, size: Int = 40) -> [[UInt8]] {
        [Array("pose/cam0/".utf8), (0..<size).map { UInt8(truncatingIfNeeded: Int(sequence) &* 7 &+ $0) }]
    }

    /// The segment files of `stream` in `store`, in order.
    static func segments(_ store: JournalStore, _ stream: JournalStream = stream) -> [String] {
        let path = store.path(of: stream)
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { $0.hasSuffix(".journal") }.sorted().map { path + "/" + $0 }
    }

    /// Journals `sequences` (with ``frames(_:size:)``) in `stream` of `store`, then closes the
    /// writer.
    static func journal(_ sequences: Range<UInt64>, in store: JournalStore, _ stream: JournalStream = stream)
        throws
    {
        let writer = try store.openWriter(for: stream)
        for sequence in sequences { try writer.append(sequence: sequence, frames: frames(sequence)) }
    }

    static func bytes(_ path: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: path) ?? Data())
    }

    static func write(_ bytes: [UInt8], to path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    /// The permission bits of `path`.
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        _ = lstat(path, &info)
        return info.st_mode & 0o777
    }

    /// A segment's bytes with records for `sequences`.
    static func segment(_ sequences: [UInt64], size: Int = 40) -> [UInt8] {
        var bytes = JournalRecord.segmentMagic
        var record: [UInt8] = []
        for sequence in sequences {
            try! JournalRecord.encode(sequence: sequence, frames: frames(sequence, size: size), into: &record)
            bytes += record
        }
        return bytes
    }
}
