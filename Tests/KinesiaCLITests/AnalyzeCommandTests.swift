import Foundation
import KinesiaCLI
import KinesiaMotion
import Testing

struct AnalyzeCommandTests {
    static let walk = CLIFixtures.path("data/recordings/s2d_demo_walk_mediapipe.jsonl")
    static let balance = CLIFixtures.path("data/recordings/p2s_balance_cam01_openpose25b.jsonl")
    /// Six simulated reps, half of them with a form fault.
    static let faultySet = "sim:shoulderAbduction,side=left,seed=3,reps=6,faults=0.5"

    @Test func parsesEveryOption() throws {
        let command = try AnalyzeCommand.parse([
            "rec.jsonl", "--exercise", "squat", "--side", "right", "--format=json", "--frames", "--baseline",
            "2",
            "--keypoints", "body25b", "--fps", "60",
        ])
        #expect(command.file == "rec.jsonl")
        #expect(command.exercise?.id == "squat")
        #expect(command.side == .right)
        #expect(command.format == .json)
        #expect(command.frames)
        #expect(command.baseline == 2)
        #expect(command.keypoints == .body25B)
        #expect(command.fps == 60)
        let defaults = try AnalyzeCommand.parse(["r", "--exercise", "wallSit", "--side", "left"])
        #expect(defaults.format == .text)
        #expect(!defaults.frames)
        #expect(defaults.baseline == nil)
    }

    @Test func anUnknownExerciseIsAUsageErrorNamingTheCatalog() async {
        let run = await CommandRun.run(["analyze", Self.walk, "--exercise", "jumpingJacks", "--side", "left"])
        #expect(run.status == 64)
        #expect(run.output.isEmpty)
        #expect(
            run.error.contains(
                "invalid value \"jumpingJacks\" for --exercise; expected one of: shoulderFlexion"))
        #expect(run.error.contains("wallSit"))
        #expect(run.error.contains("USAGE: kinesia analyze <file>"))
    }

    @Test func anUnknownSideOrFlagIsAUsageError() async {
        let side = await CommandRun.run(["analyze", Self.walk, "--exercise", "squat", "--side", "middle"])
        #expect(side.status == 64)
        #expect(side.error.contains("expected one of: left, right"))
        let flag = await CommandRun.run([
            "analyze", Self.walk, "--exercise", "squat", "--side", "left", "--fast",
        ])
        #expect(flag.status == 64)
        #expect(flag.error.contains("unknown option \"--fast\""))
        let format = await CommandRun.run([
            "analyze", Self.walk, "--exercise", "squat", "--side", "left", "--format", "xml",
        ])
        #expect(format.status == 64)
        #expect(format.error.contains("expected one of: text, json"))
        let missing = await CommandRun.run(["analyze", Self.walk, "--exercise", "squat"])
        #expect(missing.status == 64)
        #expect(missing.error.contains("missing option --side"))
        let baseline = await CommandRun.run([
            "analyze", Self.walk, "--exercise", "squat", "--side", "left", "--baseline", "0",
        ])
        #expect(baseline.status == 64)
        #expect(baseline.error.contains("--baseline must be at least 1"))
    }

    @Test func aMissingFileFailsWithExitOne() async {
        let run = await CommandRun.run([
            "analyze", "/nonexistent/x.jsonl", "--exercise", "squat", "--side", "left",
        ])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.error == "kinesia analyze: error: /nonexistent/x.jsonl: no such file or folder\n")
    }

    @Test func aMalformedFileFailsNamingFileAndLine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bad.jsonl")
        try Data("{\"t\":0,\"points\":{}}\n{\"t\":0.1,\"points\":{\"nose\":[1,\"x\"]}}\n".utf8).write(
            to: file)
        let run = await CommandRun.run(["analyze", file.path, "--exercise", "squat", "--side", "left"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.error.hasPrefix("kinesia analyze: error: \(file.path):2:27: point \"nose\""))
    }

    /// A simulated set with clean and rejected reps and live faults: the summary is what the
    /// events (and frames) before it say, rep by rep.
    @Test func jsonOutputIsJSONLinesEndingWithTheSummary() async throws {
        let run = await CommandRun.run([
            "analyze", Self.faultySet, "--exercise", "shoulderAbduction", "--side", "left", "--format",
            "json",
            "--frames",
        ])
        #expect(run.status == 0)
        #expect(run.error.isEmpty)
        let lines = run.outputLines
        let last = try #require(lines.last)
        guard case .summary(let summary) = try MotionJSON.decode(last) else {
            Issue.record("the last line is not a summary: \(last)")
            return
        }
        var completed: [Rep] = []
        var rejected: [Rep] = []
        var judged: [Rep] = []
        var faults: [FormFeedback] = []
        var values: [Double] = []
        for line in lines.dropLast() {
            #expect(line.hasPrefix("{\"type\":\""))
            switch try MotionJSON.decode(line) {
            case .frame(let frame): values += frame.value.map { [$0] } ?? []
            case .event(_, .repCompleted(let rep)):
                completed.append(rep)
                judged.append(rep)
            case .event(_, .repRejected(let rep)):
                rejected.append(rep)
                judged.append(rep)
            case .event(_, .formFault(let fault)): faults.append(fault)
            case .event: break
            default: Issue.record("a second summary, or an unknown line: \(line)")
            }
        }
        // Not 0 against 0: this set has both kinds of reps, and faults said while they happened.
        #expect(completed.count >= 2)
        #expect(rejected.count >= 2)
        #expect(summary.repCount == completed.count)
        #expect(summary.rejectedCount == rejected.count)
        #expect(summary.reps == judged)
        #expect(completed.allSatisfy { $0.isClean })
        #expect(rejected.allSatisfy { !$0.isClean })
        // A rejected rep's faults were each said as a formFault event.
        #expect(Set(rejected.flatMap(\.faults)).isSubset(of: Set(faults)))
        #expect(!faults.isEmpty)
        // The best is the highest smoothed value of the frames, and no rep peaked above it.
        #expect(summary.best == values.max())
        #expect(judged.allSatisfy { $0.peak <= summary.best })
    }

    @Test func framesGiveOneLinePerPose() async throws {
        let run = await CommandRun.run([
            "analyze", Self.walk, "--exercise", "kneeFlexion", "--side", "left", "--format", "json",
            "--frames",
        ])
        #expect(run.status == 0)
        let frames = try run.outputLines.compactMap { line -> MotionFrame? in
            if case .frame(let frame) = try MotionJSON.decode(line) { return frame }
            return nil
        }
        #expect(frames.count == 201)
        #expect(frames.prefix(46).allSatisfy { $0.raw == nil && $0.value == nil })  // nobody in view
        // The raw value is the knee flexion of that pose, computed here by hand (not by the
        // catalog's code): 180° minus the hip-knee-ankle angle, from the dot product.
        let poses = try JSONLinesRecording.load(contentsOf: URL(fileURLWithPath: Self.walk))
        #expect(frames.count == poses.count)
        var measured = 0
        for (frame, pose) in zip(frames, poses) {
            #expect(frame.t == pose.timestamp)
            guard let hip = pose.points[.leftHip], let knee = pose.points[.leftKnee],
                let ankle = pose.points[.leftAnkle]
            else {
                #expect(frame.raw == nil, "t \(frame.t)")
                continue
            }
            let (ux, uy) = (Double(hip.x - knee.x), Double(hip.y - knee.y))
            let (vx, vy) = (Double(ankle.x - knee.x), Double(ankle.y - knee.y))
            let cosine =
                (ux * vx + uy * vy) / ((ux * ux + uy * uy).squareRoot() * (vx * vx + vy * vy).squareRoot())
            let flexion = 180 - acos(max(-1, min(1, cosine))) * 180 / Double.pi
            let raw = try #require(frame.raw, "t \(frame.t)")
            #expect(abs(raw - flexion) < 1e-6, "t \(frame.t): \(raw) against \(flexion)")
            measured += 1
        }
        #expect(measured >= 150)
    }

    @Test func textOutputEndsWithASummaryLine() async {
        let run = await CommandRun.run([
            "analyze", Self.walk, "--exercise", "kneeFlexion", "--side", "left", "--frames",
        ])
        #expect(run.status == 0)
        let lines = run.outputLines
        #expect(lines.last?.hasPrefix("summary: ") == true)
        #expect(lines.first == "   0.000  frame             raw -  value -")
        #expect(lines.count >= 202)
    }

    @Test func readsAnOpenPoseFolder() async {
        let run = await CommandRun.run([
            "analyze", CLIFixtures.path("data/openpose/body25b"), "--keypoints", "body25b", "--fps", "60",
            "--exercise", "shoulderAbduction", "--side", "right", "--format", "json", "--frames",
        ])
        #expect(run.status == 0)
        #expect(run.outputLines.filter { $0.hasPrefix("{\"type\":\"frame\"") }.count == 12)
    }

    @Test(arguments: ["json", "text"])
    func theSameRecordingTwiceGivesIdenticalOutput(_ format: String) async {
        let arguments = [
            "analyze", Self.balance, "--exercise", "hipAbduction", "--side", "left", "--format", format,
            "--frames", "--baseline", "2",
        ]
        let first = await CommandRun.run(arguments)
        let second = await CommandRun.run(arguments)
        #expect(first.status == 0)
        // Not only frames: this recording gives this exercise faults and a rejected rep.
        #expect(first.output.contains("formFault"))
        #expect(first.output.contains("repRejected"))
        #expect(first.output == second.output)
    }
}
