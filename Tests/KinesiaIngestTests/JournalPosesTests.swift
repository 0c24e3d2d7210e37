import Foundation
import KinesiaJournal
import KinesiaMotion
import KinesiaWire
import Testing

@testable import KinesiaIngest

/// A camera's pose journal read as a recording (`journal:PATH[,camera=ID][,stream=ID][,first=N][,last=N]`).
struct JournalPosesTests {
    static let first = StreamID(0x0000_0000_0000_00a1)
    static let second = StreamID(0x0000_0000_0000_00b2)

    /// A state directory with two streams of camera cam0: `first` (poses 0...9 at t = sequence)
    /// and `second` (poses 0...4 at t = 100 + sequence).
    static func withJournal(_ body: (String) throws -> Void) throws {
        let root = NSTemporaryDirectory() + "kinesia-journal-poses-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(
            atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let store = try JournalStore(
            directory: root + "/journal", policy: JournalPolicy(sync: .never))
        for (id, count, offset) in [(first, 10, 0.0), (second, 5, 100.0)] {
            let stream = JournalStream(topic: try Topic.pose(camera: "cam0"), streamID: id)
            let writer = try store.openWriter(for: stream)
            for sequence in 0..<UInt64(count) {
                let header = WireHeader(kind: .pose, streamID: id, sequence: sequence, sentAt: 0)
                let pose = Pose(timestamp: offset + Double(sequence))
                try writer.append(
                    sequence: sequence,
                    frames: [Array("pose/cam0/".utf8), try PoseCodec.encode(pose, header: header)])
            }
            writer.close()
        }
        try body(root)
    }

    @Test func aStreamIdAndASequenceRangeGiveTheRunsPoses() throws {
        try Self.withJournal { root in
            let run = try JournalPoses.load("journal:\(root),stream=\(Self.first),first=3,last=6")
            #expect(run.poses.map(\.timestamp) == [3, 4, 5, 6])
            #expect(run.warning == nil)
            let from = try JournalPoses.load(
                "journal:\(root)/journal,camera=cam0,stream=\(Self.second),first=2")
            #expect(from.poses.map(\.timestamp) == [102, 103, 104])
            let upTo = try JournalPoses.load("journal:\(root),stream=\(Self.first),last=1")
            #expect(upTo.poses.map(\.timestamp) == [0, 1])
        }
    }

    @Test func withoutAStreamTwoStreamsAreAChoiceToMake() throws {
        try Self.withJournal { root in
            #expect {
                try JournalPoses.load("journal:\(root)")
            } throws: { error in
                "\(error)".contains("holds 2 pose streams")
            }
        }
    }

    @Test(arguments: [
        ("stream=12", "is not a stream id (16 hex digits)"),
        ("stream=00000000000000zz", "is not a stream id"),
        ("first=-1", "is not a sequence number"),
        ("first=9,last=3", "first=9 is after last=3"),
        ("first=1,first=2", "first given twice"),
        ("from=3", "unknown option \"from=3\""),
        ("camera=", "unknown option"),
    ])
    func badOptionsAreUsageErrors(_ option: String, _ message: String) throws {
        try Self.withJournal { root in
            #expect {
                try JournalPoses.load("journal:\(root),\(option)")
            } throws: { error in
                (error as? PoseSourceError)?.isUsageError == true && "\(error)".contains(message)
            }
        }
    }

    @Test func aStreamOrARangeWithNoPoseIsAFailureThatSaysSo() throws {
        try Self.withJournal { root in
            #expect {
                try JournalPoses.load("journal:\(root),stream=00000000000000c3")
            } throws: { error in
                "\(error)".contains("no pose stream 00000000000000c3")
            }
            #expect {
                try JournalPoses.load("journal:\(root),stream=\(Self.second),first=7")
            } throws: { error in
                (error as? PoseSourceError)?.isUsageError == false
                    && "\(error)".contains("no pose of sequence 7...")
            }
        }
    }
}
