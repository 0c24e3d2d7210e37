import Foundation
import KinesiaWire
import Testing

@testable import KinesiaWorker

/// Where sessions started, kept per worker and camera in the state directory.
struct SessionStartsTests {
    static func stateDirectory() -> String {
        let directory = NSTemporaryDirectory() + "kinesia-starts-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A left and a right worker of one camera share a state directory (the default one): each
    /// gets back its own segments, never the other's.
    @Test func twoWorkersOfOneCameraKeepTheirOwnStarts() throws {
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let left = [StreamID(0x1111)]
        let right = [StreamID(0x2222)]
        let poses = StreamID(0xABCD)
        let starts = try SessionStarts(state: state)
        try starts.save(camera: "cam0", sessions: left, segments: [PoseSegment(stream: poses, first: 3)])
        try starts.save(camera: "cam0", sessions: right, segments: [PoseSegment(stream: poses, first: 9)])
        #expect(try starts.load(camera: "cam0", sessions: left) == [PoseSegment(stream: poses, first: 3)])
        #expect(try starts.load(camera: "cam0", sessions: right) == [PoseSegment(stream: poses, first: 9)])
        // Other sessions (a new patient) start afresh.
        #expect(try starts.load(camera: "cam0", sessions: [StreamID(0x3333)]) == [])
        #expect(try starts.load(camera: "cam1", sessions: left) == [])
    }

    /// The live loop saves a camera's starts without a device flush (a write and a rename) and
    /// leaves the flush to the journal's thread: what it saved reads back at once, the flush
    /// of a camera with no record does nothing, and a flush that cannot be done says where.
    @Test func startsSavedWithoutAFlushReadBackAndAreFlushedApart() throws {
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let sessions = [StreamID(0x1111)]
        let poses = StreamID(0xABCD)
        let starts = try SessionStarts(state: state)
        try starts.save(
            camera: "cam0", sessions: sessions, segments: [PoseSegment(stream: poses, first: 3)],
            synced: false)
        #expect(try starts.load(camera: "cam0", sessions: sessions) == [PoseSegment(stream: poses, first: 3)])
        let name = SessionStarts.fileName(camera: "cam0", sessions: sessions)
        #expect(FileManager.default.fileExists(atPath: starts.directory + "/" + name))
        #expect(!FileManager.default.fileExists(atPath: starts.directory + "/" + name + ".new"))
        try SessionStarts.sync(in: starts.directory, camera: "cam0", sessions: sessions)
        try SessionStarts.sync(in: starts.directory, camera: "cam1", sessions: sessions)
        try FileManager.default.removeItem(atPath: state)
        #expect(throws: WorkerStateError.self) {
            try SessionStarts.sync(in: starts.directory, camera: "cam0", sessions: sessions)
        }
    }

    /// The holes given up are flushed by one job for all those appended before it starts: the
    /// first hole asks for a job, the holes after it (of any camera) while it waits do not, a
    /// hole after the job took them asks again; a file gone meanwhile is passed over, and a
    /// flush that cannot be done says where.
    @Test func holesGivenUpAreFlushedByOneJobForAllThatWait() throws {
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let sessions = [StreamID(0x1111)]
        let poses = StreamID(0xABCD)
        let starts = try SessionStarts(state: state)
        let skips = starts.unsyncedSkips
        try starts.save(
            camera: "cam0", sessions: sessions, segments: [PoseSegment(stream: poses, first: 0)],
            synced: false)
        let name = { (camera: String) in
            SessionStarts.fileName(camera: camera, sessions: sessions) + ".skipped"
        }
        #expect(try starts.appendSkip(camera: "cam0", sessions: sessions, stream: poses, sequences: 5..<7))
        #expect(
            !(try starts.appendSkip(camera: "cam0", sessions: sessions, stream: poses, sequences: 9..<10)))
        #expect(!(try starts.appendSkip(camera: "cam1", sessions: sessions, stream: poses, sequences: 2..<3)))
        #expect(skips.marked == [name("cam0"), name("cam1")])
        try skips.flush()
        #expect(skips.marked.isEmpty)
        // The lines read back (the flush changed nothing in them).
        #expect(
            try starts.load(camera: "cam0", sessions: sessions) == [
                PoseSegment(stream: poses, first: 0, last: nil, skipped: [5..<7, 9..<10])
            ])
        #expect(try starts.appendSkip(camera: "cam1", sessions: sessions, stream: poses, sequences: 4..<5))
        try FileManager.default.removeItem(atPath: starts.directory + "/" + name("cam1"))
        try skips.flush()
        #expect(try starts.appendSkip(camera: "cam0", sessions: sessions, stream: poses, sequences: 11..<12))
        try FileManager.default.removeItem(atPath: state)
        #expect(throws: WorkerStateError.self) { try skips.flush() }
        // A failed flush took the marks: the next hole asks for a job again.
        #expect(skips.marked.isEmpty)
    }

    /// Where the sessions' run began is kept however the segments are pruned (a checkpoint
    /// replaces them with the one it resumes from); a file without it gives its first segment.
    @Test func theRunsFirstPoseOutlivesThePrunedSegments() throws {
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let sessions = [StreamID(0x1111)]
        let poses = StreamID(0xABCD)
        let starts = try SessionStarts(state: state)
        try starts.save(camera: "cam0", sessions: sessions, segments: [PoseSegment(stream: poses, first: 3)])
        #expect(
            (try starts.loadWithOrigin(camera: "cam0", sessions: sessions).origin).map {
                [$0.stream.rawValue, $0.sequence]
            } == [
                0xABCD, 3,
            ])
        try starts.save(
            camera: "cam0", sessions: sessions, segments: [PoseSegment(stream: poses, first: 900)],
            origin: (poses, 3))
        #expect(
            try starts.load(camera: "cam0", sessions: sessions) == [PoseSegment(stream: poses, first: 900)])
        #expect(
            (try starts.loadWithOrigin(camera: "cam0", sessions: sessions).origin).map {
                [$0.stream.rawValue, $0.sequence]
            } == [
                0xABCD, 3,
            ])
        #expect(try starts.loadWithOrigin(camera: "cam0", sessions: [StreamID(0x2222)]).origin == nil)
        #expect(try starts.loadWithOrigin(camera: "cam9", sessions: sessions).origin == nil)
    }

    /// The one file per camera of earlier versions is still read, for its own sessions only.
    @Test func theFileOfEarlierVersionsIsReadForItsSessions() throws {
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let starts = try SessionStarts(state: state)
        let json = #"{"segments":[{"first":5,"stream":"000000000000abcd"}],"sessions":["0000000000001111"]}"#
        try json.write(toFile: state + "/starts/cam0.json", atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: state + "/starts/cam0.json")
        #expect(
            try starts.load(camera: "cam0", sessions: [StreamID(0x1111)])
                == [PoseSegment(stream: StreamID(0xABCD), first: 5)])
        #expect(try starts.load(camera: "cam0", sessions: [StreamID(0x2222)]) == [])
    }

    /// Holes given up live are appended cheaply, read back merged, and folded in by the next
    /// save; sequence numbers as large as a UInt64 goes read back exactly (a forged pose
    /// numbered 2^64-1 must not make the state unreadable, and so the worker unable to start).
    @Test func skippedHolesAndHugeSequenceNumbersReadBackExactly() throws {
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let sessions = [StreamID(0x1111)]
        let poses = StreamID(0xABCD)
        let starts = try SessionStarts(state: state)
        let segments = [
            PoseSegment(stream: StreamID(0x99), first: 0, last: .max - 1, skipped: [5..<9]),
            PoseSegment(stream: poses, first: 1 << 60),
        ]
        try starts.save(camera: "cam0", sessions: sessions, segments: segments)
        #expect(try starts.load(camera: "cam0", sessions: sessions) == segments)
        try starts.appendSkip(
            camera: "cam0", sessions: sessions, stream: poses, sequences: (1 << 60 + 3)..<(.max))
        try starts.appendSkip(
            camera: "cam0", sessions: sessions, stream: poses, sequences: (1 << 60 + 1)..<(1 << 60 + 2))
        var expected = segments
        expected[1].skipped = [(1 << 60 + 1)..<(1 << 60 + 2), (1 << 60 + 3)..<(.max)]
        #expect(try starts.load(camera: "cam0", sessions: sessions) == expected)
        // A torn last line is passed over.
        let path =
            state + "/starts/" + SessionStarts.fileName(camera: "cam0", sessions: sessions) + ".skipped"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("000000000000abcd 12".utf8))
        handle.closeFile()
        #expect(try starts.load(camera: "cam0", sessions: sessions) == expected)
        // A save folds the appended holes in and empties the appended file.
        try starts.save(camera: "cam0", sessions: sessions, segments: expected)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
        #expect(try starts.load(camera: "cam0", sessions: sessions) == expected)
    }

    /// The `.skipped` file is held open: a line appended after a save emptied the file is the
    /// file's only line, and a worker restarted after a kill tore the last line reads back both
    /// the lines before the tear and those it appends after it (the torn line is passed over,
    /// never glued to the next one).
    @Test func holesAppendedAfterASaveOrATornLineReadBackWhole() throws {
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let sessions = [StreamID(0x1111)]
        let poses = StreamID(0xABCD)
        let segments = [PoseSegment(stream: poses, first: 0)]
        let path =
            state + "/starts/" + SessionStarts.fileName(camera: "cam0", sessions: sessions) + ".skipped"
        let starts = try SessionStarts(state: state)
        try starts.save(camera: "cam0", sessions: sessions, segments: segments)
        try starts.appendSkip(camera: "cam0", sessions: sessions, stream: poses, sequences: 5..<7)
        var expected = segments
        expected[0].skipped = [5..<7]
        try starts.save(camera: "cam0", sessions: sessions, segments: expected)
        try starts.appendSkip(camera: "cam0", sessions: sessions, stream: poses, sequences: 9..<10)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(poses) 9 10\n")
        expected[0].skipped = [5..<7, 9..<10]
        #expect(try starts.load(camera: "cam0", sessions: sessions) == expected)

        // A kill tore the next line; the restarted worker appends another hole.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("\(poses) 12".utf8))
        handle.closeFile()
        let restarted = try SessionStarts(state: state)
        try restarted.appendSkip(camera: "cam0", sessions: sessions, stream: poses, sequences: 20..<21)
        expected[0].skipped = [5..<7, 9..<10, 20..<21]
        #expect(try restarted.load(camera: "cam0", sessions: sessions) == expected)
    }
}

/// A run's segments from its first pose, brought up to what the feed records (pruned by a
/// checkpoint's restore, a new pose stream, a hole given up).
struct PoseSegmentHistoryTests {
    @Test func aPrunedFeedKeepsTheRunsFirstPoseAndEveryHole() {
        let history = [
            PoseSegment(stream: StreamID(1), first: 0, last: 40, skipped: [3..<4]),
            PoseSegment(stream: StreamID(2), first: 0, skipped: [5..<6]),
        ]
        // Restored from a checkpoint at pose 30 of stream 2, then a hole, then a new stream.
        let recent = [
            PoseSegment(stream: StreamID(2), first: 30, last: 90, skipped: [50..<52]),
            PoseSegment(stream: StreamID(3), first: 0),
        ]
        #expect(
            PoseSegment.history(history, extendedBy: recent) == [
                PoseSegment(stream: StreamID(1), first: 0, last: 40, skipped: [3..<4]),
                PoseSegment(stream: StreamID(2), first: 0, last: 90, skipped: [5..<6, 50..<52]),
                PoseSegment(stream: StreamID(3), first: 0),
            ])
    }

    @Test func aFeedOfAnotherRunIsTakenAsItIs() {
        let history = [PoseSegment(stream: StreamID(1), first: 0)]
        let recent = [PoseSegment(stream: StreamID(9), first: 12)]
        #expect(PoseSegment.history(history, extendedBy: recent) == recent)
        #expect(PoseSegment.history([], extendedBy: recent) == recent)
        #expect(PoseSegment.history(history, extendedBy: []) == [])
    }
}
