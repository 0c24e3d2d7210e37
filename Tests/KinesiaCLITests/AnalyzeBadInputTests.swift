import Foundation
import Glibc
import KinesiaCLI
import KinesiaIngest
import KinesiaMotion
import Testing

/// `kinesia analyze` on input that is not a plain, sound recording (issue 9, items 6, 7, 12):
/// one timestamp far in the future, nothing usable, poses dropped, FIFOs and pipes.
struct AnalyzeBadInputTests {
    /// A private folder, removed by the caller.
    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-analyze-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func write(_ poses: [Pose], to url: URL) throws {
        try Data((poses.map(PoseJSONLine.encode).joined(separator: "\n") + "\n").utf8).write(to: url)
    }

    private static func summary(_ run: CommandRun) throws -> MotionSummary? {
        guard let last = run.outputLines.last, case .summary(let summary) = try MotionJSON.decode(last) else {
            return nil
        }
        return summary
    }

    private static func analyze(_ path: String, format: String = "json") async -> CommandRun {
        await CommandRun.run(["analyze", path, "--exercise", "squat", "--side", "left", "--format", format])
    }

    @Test func onePoseFarInTheFutureIsDroppedAndCountedNotEveryPoseAfterIt() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var poses = try PoseSource.load("sim:squat,seed=3")
        let clean = await Self.analyze("sim:squat,seed=3")
        #expect(try Self.summary(clean)?.repCount == 4)
        var stray = poses[poses.count / 2]
        stray.timestamp = 1e9
        poses.insert(stray, at: poses.count / 2)
        let file = folder.appendingPathComponent("stray.jsonl")
        try Self.write(poses, to: file)

        let run = await Self.analyze(file.path)
        #expect(run.status == 0, "\(run.error)")
        let summary = try #require(try Self.summary(run))
        #expect(summary.repCount == 4)
        #expect(summary.rejectedPoses == PoseRejections(timestampOutlier: 1))
        // Every event of the clean run, at the same times.
        #expect(run.outputLines.dropLast() == clean.outputLines.dropLast())
        #expect(run.error.contains("1 pose dropped: 1 timestampOutlier"), "\(run.error)")
        let text = await Self.analyze(file.path, format: "text")
        #expect(
            text.outputLines.last
                == "summary: 4 clean, 1 rejected, best 107.3, 1 pose dropped: 1 timestampOutlier")
    }

    @Test func aRecordingJoinedToItselfReportsItsSecondHalfAsDropped() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let poses = try PoseSource.load("sim:squat,seed=3")
        let file = folder.appendingPathComponent("twice.jsonl")
        try Self.write(poses + poses, to: file)
        let run = await Self.analyze(file.path)
        #expect(run.status == 0)
        let summary = try #require(try Self.summary(run))
        #expect(summary.rejectedPoses.timestampNotIncreasing == poses.count)
        #expect(summary.rejectedPoses.total == poses.count)
        #expect(run.error.contains("\(poses.count) poses dropped: \(poses.count) timestampNotIncreasing"))
        #expect(run.error.contains("the time went back"))
        let text = await Self.analyze(file.path, format: "text")
        #expect(
            text.outputLines.last?.hasSuffix(
                ", \(poses.count) poses dropped: \(poses.count) timestampNotIncreasing") == true)
    }

    @Test func aSoundRecordingSaysNothingWasDropped() async throws {
        let run = await Self.analyze("sim:squat,seed=3")
        #expect(run.status == 0)
        #expect(run.error.isEmpty)
        #expect(
            run.outputLines.last?.hasSuffix(
                #""rejectedPoses":{"total":0,"nonFinite":0,"timestampNotIncreasing":0,"absurdCoordinates":0,"absurdTimestamp":0,"timestampOutlier":0}}"#
            ) == true)
        let text = await Self.analyze("sim:squat,seed=3", format: "text")
        #expect(text.outputLines.last == "summary: 4 clean, 1 rejected, best 107.3")
    }

    @Test(arguments: ["", "\n\n  \n"])
    func aRecordingWithoutAPoseIsAnError(_ content: String) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("empty.jsonl")
        try Data(content.utf8).write(to: file)
        let run = await Self.analyze(file.path)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(
            run.error == "kinesia analyze: error: \(file.path): no pose to analyse (the recording is empty)\n"
        )
    }

    @Test func aRecordingWhosePosesAreAllDroppedIsAnError() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var poses = try PoseSource.load("sim:squat,seed=3,reps=1")
        for index in poses.indices { poses[index].timestamp = 1e12 + Double(index) }
        let file = folder.appendingPathComponent("absurd.jsonl")
        try Self.write(poses, to: file)
        let run = await Self.analyze(file.path)
        #expect(run.status == 1)
        #expect(
            run.error.contains(
                "none of its \(poses.count) poses could be analysed (\(poses.count) poses dropped: "
                    + "\(poses.count) absurdTimestamp)"), "\(run.error)")
    }

    /// Feeds `path` (a FIFO, opened for writing once a reader opens it, or an open descriptor)
    /// with `bytes` from a thread. A reader that stops early makes the writes fail (`EPIPE`),
    /// never kills the test process (SIGPIPE is ignored).
    private static func feed(_ bytes: [UInt8], path: String? = nil, descriptor: Int32? = nil) -> Thread {
        signal(SIGPIPE, SIG_IGN)
        let thread = Thread {
            let fd = path.map { open($0, O_WRONLY) } ?? descriptor ?? -1
            guard fd >= 0 else { return }
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes {
                    Glibc.write(fd, $0.baseAddress! + written, bytes.count - written)
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    break
                }
                written += count
            }
            close(fd)
        }
        thread.start()
        return thread
    }

    @Test func aFIFOIsReadAsAStream() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let recording = CLIFixtures.path("data/recordings/s2d_demo_walk_mediapipe.jsonl")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: recording)))
        let fifo = folder.appendingPathComponent("poses.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        _ = Self.feed(bytes, path: fifo)
        let run = await CommandRun.run(["analyze", fifo, "--exercise", "kneeFlexion", "--side", "left"])
        // A writer still waiting for a reader (the analysis never opened the FIFO) is let go.
        close(open(fifo, O_RDONLY | O_NONBLOCK))
        let file = await CommandRun.run(["analyze", recording, "--exercise", "kneeFlexion", "--side", "left"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.isEmpty)
        #expect(run.output == file.output)
        #expect(file.output.contains("summary: 0 clean, 1 rejected, best 81.3"))
    }

    /// What a shell's `<(cat FILE)` gives: `/dev/fd/N`, the read end of a pipe.
    @Test func aPipeAsDevFdIsReadAsAStream() async throws {
        let recording = CLIFixtures.path("data/recordings/s2d_demo_walk_mediapipe.jsonl")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: recording)))
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        _ = Self.feed(bytes, descriptor: ends[1])
        let run = await CommandRun.run([
            "analyze", "/dev/fd/\(ends[0])", "--exercise", "kneeFlexion", "--side", "left",
        ])
        let file = await CommandRun.run(["analyze", recording, "--exercise", "kneeFlexion", "--side", "left"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output == file.output)
    }
}
