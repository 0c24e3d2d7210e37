import Foundation
import Glibc
import KinesiaCLI
import KinesiaIngest
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire
import Testing

extension Tag {
    /// Starts the pose detector (MediaPipe in the environment of `scripts/setup-detector`).
    @Tag static var detector: Self
}

/// The pose detector on a real video (`data/video/s2d_demo_walk.mp4`): its pose lines, the
/// region option, `analyze video:` against ingest + worker over the bus, and its failures.
///
/// The detector's environment must be installed (`scripts/test` runs `scripts/setup`, which
/// installs it): without it these tests fail, they never pass by skipping. Serialized: each
/// detector run keeps a core busy.
@Suite(.serialized, .tags(.process, .detector))
struct CameraIngestTests {
    static let video = PackagePaths.path("data/video/s2d_demo_walk.mp4")
    /// The walker's band in the committed video (the man on the box is above it).
    static let walkerRegion = "0,188,704,396"

    @Test func poseLinesFollowTheContract() async throws {
        let run = try await Detector.run(["--source", "video:\(Self.video)"])
        #expect(run.status == 0, "\(run.errors)")
        let poses = try run.lines.map { try ContractPose($0) }
        #expect(poses.count == 101)
        // Timestamps: the frames' presentation times, 15 frames per second from 0.
        #expect(poses.first?.t == 0)
        for (index, pose) in poses.enumerated() {
            #expect(abs(pose.t - Double(index) / 15) < 0.001, "frame \(index): t=\(pose.t)")
            #expect(pose.width == 704 && pose.height == 396)
        }
        // Nobody in view at first (an empty pose), then someone, and the Swift reader agrees.
        #expect(poses[0].points.isEmpty)
        #expect(poses.filter { !$0.points.isEmpty }.count > 80)
        for line in run.lines { _ = try PoseJSONLine.decode(line) }

        for (index, pose) in poses.enumerated() {
            #expect(Set(pose.points.keys) == Set(pose.confidence.keys), "frame \(index)")
            for (joint, point) in pose.points {
                #expect((0...704).contains(point.x) && (0...396).contains(point.y), "frame \(index) \(joint)")
                #expect((0.3...1).contains(pose.confidence[joint] ?? -1), "frame \(index) \(joint)")
            }
            for (middle, left, right) in [
                ("neck", "leftShoulder", "rightShoulder"), ("root", "leftHip", "rightHip"),
            ] {
                if let l = pose.points[left], let r = pose.points[right] {
                    let m = try #require(pose.points[middle], "frame \(index): \(middle)")
                    #expect(abs(m.x - (l.x + r.x) / 2) <= 0.01 && abs(m.y - (l.y + r.y) / 2) <= 0.01)
                } else {
                    #expect(pose.points[middle] == nil, "frame \(index): \(middle) without both sides")
                }
            }
            // y down: a standing person's nose is above the hips, the hips above the ankles.
            if let nose = pose.points["nose"], let root = pose.points["root"] {
                #expect(nose.y < root.y, "frame \(index)")
            }
            if let root = pose.points["root"],
                let ankle = pose.points["leftAnkle"] ?? pose.points["rightAnkle"]
            {
                #expect(root.y < ankle.y, "frame \(index)")
            }
        }
        // Anatomical sides: the man on the box faces the camera for the first 3 s, so his left
        // shoulder and hip are on the image's right. (BlazePose swaps the whole body now and
        // then, a known fault kept in data/recordings: most frames, not all.)
        let facing = poses.filter { (0.3...3.2).contains($0.t) }
        let leftOnTheRight = facing.filter { pose in
            guard let ls = pose.points["leftShoulder"], let rs = pose.points["rightShoulder"],
                let lh = pose.points["leftHip"], let rh = pose.points["rightHip"]
            else { return false }
            return ls.x > rs.x && lh.x > rh.x
        }
        #expect(facing.count == 44)
        #expect(leftOnTheRight.count * 4 >= facing.count * 3, "\(leftOnTheRight.count) of \(facing.count)")
    }

    /// `data/recordings/s2d_demo_walk_mediapipe.jsonl` was made with the same model on the
    /// original video (walker region `0,470,1768,994`, frames 0-200): the detector gives the
    /// same points. On the original, not the committed copy: re-encoding moves points.
    @Test func theRecordingMadeWithTheSameModelIsReproduced() async throws {
        let original = Detector.home + "/sports2d-demo.mp4"
        try #require(
            FileManager.default.fileExists(atPath: original), "no \(original): run scripts/setup-detector")
        let run = try await Detector.run([
            "--source", "video:\(original)", "--roi", "0,470,1768,994", "--max-frames", "201",
        ])
        #expect(run.status == 0, "\(run.errors)")
        let ours = try run.lines.map { try ContractPose($0) }
        let recording = try String(
            contentsOfFile: PackagePaths.path("data/recordings/s2d_demo_walk_mediapipe.jsonl"),
            encoding: .utf8)
        let theirs = try recording.split(separator: "\n").map { try ContractPose(String($0)) }
        try #require(ours.count == theirs.count)
        var distances: [Double] = []
        var unmatched = 0
        for (mine, reference) in zip(ours, theirs) {
            #expect(abs(mine.t - reference.t) < 1e-5)
            #expect(mine.width == reference.width && mine.height == reference.height)
            unmatched += Set(mine.points.keys).symmetricDifference(reference.points.keys).count
            for (joint, point) in mine.points {
                guard let other = reference.points[joint] else { continue }
                distances.append(max(abs(point.x - other.x), abs(point.y - other.y)))
            }
        }
        distances.sort()
        #expect(distances.count > 2500)
        // On the machine that made the recording they are equal to the rounding; another CPU's
        // floating point may move a point a little or a joint across the visibility threshold.
        #expect(unmatched * 100 <= distances.count)
        #expect(distances[distances.count / 2] <= 0.5)
        #expect((distances.last ?? .infinity) <= 3, "largest distance \(distances.last ?? .nan) px")
    }

    /// The same pixels at another place in a larger frame, analysed with `--roi` around them,
    /// give the same points moved by exactly the offset.
    @Test func theRegionOptionMapsPointsBackExactly() async throws {
        let directory = try Detector.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let padded = directory + "/padded.avi"
        let made = try TestProcess.run(
            Detector.python,
            [
                PackagePaths.path("detector/transform_video.py"), Self.video, padded, "--frames", "60",
                "--pad",
                "100,50,20,30",
            ],
            environment: ProcessInfo.processInfo.environment)
        try #require(made.status == 0, "\(made.output)")

        let direct = try await Detector.run([
            "--source", "video:\(Self.video)", "--roi", Self.walkerRegion, "--max-frames", "60",
        ])
        let moved = try await Detector.run([
            "--source", "video:\(padded)", "--roi", "100,238,804,446", "--max-frames", "60",
        ])
        #expect(direct.status == 0 && moved.status == 0, "\(direct.errors)\n\(moved.errors)")
        let a = try direct.lines.map { try ContractPose($0) }
        let b = try moved.lines.map { try ContractPose($0) }
        try #require(a.count == 60 && b.count == 60)
        #expect(a.filter { !$0.points.isEmpty }.count >= 30, "the walker is in view from frame 23")
        for (index, (pose, shifted)) in zip(a, b).enumerated() {
            #expect(pose.width == 704 && pose.height == 396 && shifted.width == 824 && shifted.height == 476)
            #expect(pose.t == shifted.t)
            #expect(Set(pose.points.keys) == Set(shifted.points.keys), "frame \(index)")
            for (joint, point) in pose.points {
                // Inside the region, in full-frame pixels.
                #expect(point.y >= 188 && point.y <= 396, "frame \(index) \(joint)")
                let other = try #require(shifted.points[joint])
                #expect(abs(other.x - point.x - 100) <= 0.011 && abs(other.y - point.y - 50) <= 0.011)
            }
        }
    }

    /// A selfie view (the image mirrored) with `--mirrored` keeps the person's anatomical sides.
    @Test func aMirroredViewWithTheMirroredOptionKeepsTheSides() async throws {
        let directory = try Detector.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let flipped = directory + "/flipped.avi"
        let made = try TestProcess.run(
            Detector.python,
            [
                PackagePaths.path("detector/transform_video.py"), Self.video, flipped, "--frames", "45",
                "--flip",
            ],
            environment: ProcessInfo.processInfo.environment)
        try #require(made.status == 0, "\(made.output)")
        let direct = try await Detector.run(["--source", "video:\(Self.video)", "--max-frames", "45"])
        let mirrored = try await Detector.run([
            "--source", "video:\(flipped)", "--mirrored", "--max-frames", "45",
        ])
        #expect(direct.status == 0 && mirrored.status == 0, "\(direct.errors)\n\(mirrored.errors)")
        let a = try direct.lines.map { try ContractPose($0) }
        let b = try mirrored.lines.map { try ContractPose($0) }
        try #require(a.count == 45 && b.count == 45)
        // The same joint where the mirror puts it: x -> 704 - x, within a few pixels (the
        // detector sees another image). Frames where either run swapped the whole body are the
        // detector's fault: most frames agree.
        var agreeing = 0
        var compared = 0
        for (pose, mirror) in zip(a, b) {
            guard let ls = pose.points["leftShoulder"], let rs = pose.points["rightShoulder"],
                let mls = mirror.points["leftShoulder"], let mrs = mirror.points["rightShoulder"]
            else { continue }
            compared += 1
            if abs(704 - mls.x - ls.x) <= 6, abs(704 - mrs.x - rs.x) <= 6, abs(mls.y - ls.y) <= 6 {
                agreeing += 1
            }
        }
        #expect(compared >= 40)
        #expect(agreeing * 4 >= compared * 3, "\(agreeing) of \(compared)")
    }

    /// `kinesia analyze video:` and `kinesia ingest --source video:` into a worker through the
    /// broker give the same events: the man's jumping jacks as shoulder abduction, both sides.
    @Test func analyzeOfAVideoGivesTheEventsOfIngestAndWorker() async throws {
        let spec = "video:\(Self.video)"
        var expected: [String: [String]] = [:]
        for side in ["left", "right"] {
            expected["event/cam0/\(side)/"] = try await Oracle.events(
                source: spec, exercise: "shoulderAbduction", side: side)
        }
        let total = expected.values.map(\.count).reduce(0, +)
        #expect(total >= 6)

        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let listener = try await topology.startListener(
            "listen", ["event/", "--format", "json", "--count", String(total)])
        let health = try HealthWatch(bus: topology.bus)
        let worker = try await topology.startWorker(
            "worker",
            [
                "--camera", "cam0", "--session", "left=shoulderAbduction:left", "--session",
                "right=shoulderAbduction:right",
            ])
        let ingest = try topology.start(
            "ingest",
            ["ingest", "--camera", "cam0", "--source", spec, "--pace", "max", "--name", "ingest-cam0"])
        #expect(await ingest.waitForExit(timeout: .seconds(120)) == 0, "\(ingest.diagnostics)")
        #expect(await listener.waitForExit(timeout: .seconds(30)) == 0, "\(topology.diagnostics)")
        let received = ListenedLine.byTopic(listener.outputLines)
        for (topic, lines) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(received[topic, default: []] == lines, "\(topic)")
        }
        #expect(worker.isRunning)
        let report = await health.wait(for: "worker") { $0.counters["poses"] == 101 }
        #expect(report?.counters["gaps"] == 0, "\(String(describing: health.latest["worker"]))")
        // The detector's counters ride on the ingest's health reports.
        let ingestReport = await health.wait(for: "ingest-cam0") { $0.counters["framesAnalysed"] == 101 }
        #expect(
            ingestReport?.counters["framesIn"] == 101, "\(String(describing: health.latest["ingest-cam0"]))")
        #expect(ingestReport?.counters["framesDropped"] == 0)
        #expect(ingest.errorText.contains("detector: 101 frames"))
    }

    /// Plays the test video as camera `camera` (a live source: newest frame first) through a
    /// real broker and ingest until the video ends, and returns the ingest's standard error and
    /// the counters of its health report once it has read all 101 frames (the topology, its
    /// files included, is gone when this returns).
    private static func playVideoAsCamera(_ camera: String, _ options: [String]) async throws
        -> (errorText: String, counters: [String: Int])
    {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let health = try HealthWatch(bus: topology.bus)
        let ingest = try topology.start(
            "ingest", ["ingest", "--camera", camera, "--source", "camera:\(video)"] + options)
        #expect(await ingest.waitForExit(timeout: .seconds(120)) == 0, "\(ingest.diagnostics)")
        let report = await health.wait(for: "ingest-\(camera)") { $0.counters["framesIn"] == 101 }
        let counters = try #require(
            report?.counters, "\(String(describing: health.latest["ingest-\(camera)"]))")
        return (ingest.errorText, counters)
    }

    /// A live source faster than the detector: the newest frame is analysed, the others are
    /// dropped and counted on `health/` (the video played as a camera at 8 times its 15 fps).
    @Test func aCameraFasterThanTheDetectorDropsOlderFramesAndCountsThem() async throws {
        let (errorText, counters) = try await Self.playVideoAsCamera(
            "live", ["--speed", "8", "--wait-seconds", "0"])
        let analysed = try #require(counters["framesAnalysed"])
        let dropped = try #require(counters["framesDropped"])
        #expect(analysed + dropped == 101)
        #expect(dropped > 0 && analysed > 0)
        #expect(counters["sent"] == analysed)
        #expect(counters["fpsIn"] != nil && counters["fpsOut"] != nil && counters["detectorMs"] != nil)
        #expect(errorText.contains("\(dropped) frames dropped"))
    }

    /// While a live ingest waits for a subscriber, the poses its detector makes are dropped,
    /// not kept in the pipe to go out late in a burst.
    @Test func aCameraIngestWaitingForASubscriberDiscardsStalePoses() async throws {
        let (_, counters) = try await Self.playVideoAsCamera("idle", ["--wait-seconds", "2"])
        let discarded = try #require(counters["discarded"], "\(counters)")
        #expect(discarded >= 10, "about 2 s of a 15 fps camera, less the detector's start")
        #expect((counters["sent"] ?? 0) + discarded == counters["framesAnalysed"])
    }

    @Test func aKilledDetectorStopsTheIngestWithAClearMessage() async throws {
        let topology = try Topology()
        defer { topology.tearDown() }
        _ = try await topology.startBroker()
        let ingest = try topology.start(
            "ingest",
            [
                "ingest", "--camera", "cam0", "--source", "video:\(Self.video)", "--wait-seconds", "0",
                "--speed", "0.5",
            ])
        var detector: Int32?
        let found = await waitUntil(timeout: .seconds(30)) {
            detector = Detector.children(of: ingest.pid).first
            return detector != nil && ingest.errorText.contains("publishing")
        }
        let pid = try #require(detector, "no detector under the ingest:\n\(ingest.diagnostics)")
        #expect(found)
        #expect(kill(pid, SIGKILL) == 0)
        let status = await ingest.waitForExit(timeout: .seconds(30))
        #expect(status == 1, "\(ingest.diagnostics)")
        #expect(
            ingest.errorText.contains("the pose detector (pid \(pid)) was killed by SIGKILL"),
            "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains("kinesia up restarts it"))
    }

    @Test(arguments: [
        (["video:/nonexistent/session.mp4"], "no such video file: /nonexistent/session.mp4"),
        (["video:\(PackagePaths.path("data/video"))"], "is a directory, not a video file"),
        (["video:\(PackagePaths.path("README.md"))"], "not a video file OpenCV can read"),
        (["camera:/dev/kinesia-no-such-camera"], "no such camera: /dev/kinesia-no-such-camera"),
    ])
    func aSourceThatCannotBeReadFailsWithAClearMessage(_ source: [String], _ message: String) async throws {
        let directory = try Detector.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ingest = try KinesiaProcess(
            "ingest", ["ingest", "--camera", "cam0", "--source", source[0], "--bus", directory + "/bus"],
            directory: directory)
        #expect(await ingest.waitForExit(timeout: .seconds(60)) == 1, "\(ingest.diagnostics)")
        #expect(ingest.errorText.contains(message), "\(ingest.diagnostics)")
        if !source[0].hasPrefix("camera:") {
            let analyze = try KinesiaProcess(
                "analyze", ["analyze", source[0], "--exercise", "squat", "--side", "left"],
                directory: directory)
            #expect(await analyze.waitForExit(timeout: .seconds(60)) == 1, "\(analyze.diagnostics)")
            #expect(analyze.errorText.contains(message), "\(analyze.diagnostics)")
        }
    }

    @Test func aMissingEnvironmentSaysToRunSetup() async throws {
        let directory = try Detector.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var environment = ProcessInfo.processInfo.environment
        environment["KINESIA_DETECTOR_HOME"] = directory + "/nothing-here"
        let analyze = try TestProcess.run(
            try PackagePaths.kinesia(),
            ["analyze", "video:\(Self.video)", "--exercise", "squat", "--side", "left"],
            environment: environment)
        #expect(analyze.status == 1)
        #expect(analyze.output.contains("the pose detector's environment is missing"), "\(analyze.output)")
        #expect(analyze.output.contains("run scripts/setup"))
    }
}

/// Runs the detector script of this checkout with the environment's Python.
enum Detector {
    static let home = DetectorEnvironment.home(environment: ProcessInfo.processInfo.environment)
    static let python = home + "/venv/bin/python"
    static let script = PackagePaths.path("detector/kinesia_detector.py")

    struct Run {
        var status: Int32?
        var lines: [String]
        var errors: String
    }

    /// Runs `kinesia_detector.py ARGUMENTS` to its end (at most two minutes).
    static func run(_ arguments: [String]) async throws -> Run {
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the detector's environment is not installed (no \(python)): run scripts/setup-detector")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = try TestProcess(
            executable: python, arguments: [script] + arguments,
            environment: ProcessInfo.processInfo.environment,
            standardOutput: directory + "/out", standardError: directory + "/err")
        let status = await process.waitForExit(timeout: .seconds(120))
        if status == nil { _ = await process.stop(grace: .seconds(1)) }
        let output = TestProcess.readFile(directory + "/out")
        return Run(
            status: status, lines: output.split(separator: "\n").map(String.init),
            errors: TestProcess.readFile(directory + "/err"))
    }

    static func temporaryDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "kinesia-detector-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The children of `pid` (from `/proc/PID/task/*/children`).
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            TestProcess.readFile("/proc/\(pid)/task/\(task)/children").split(separator: " ").compactMap {
                Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
    }
}

/// One pose line read with Foundation's JSON parser, checking the contract's fields.
struct ContractPose {
    var t: Double
    var width: Double
    var height: Double
    var points: [String: (x: Double, y: Double)]
    var confidence: [String: Double]

    init(_ line: String) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["t", "w", "h", "points", "confidence"], "\(line)")
        t = try #require(object["t"] as? Double)
        width = try #require(object["w"] as? Double)
        height = try #require(object["h"] as? Double)
        let rawPoints = try #require(object["points"] as? [String: [Double]])
        let joints = Set(Joint.allCases.map(\.rawValue))
        points = [:]
        for (name, pair) in rawPoints {
            #expect(joints.contains(name), "unknown joint \(name)")
            try #require(pair.count == 2)
            points[name] = (pair[0], pair[1])
        }
        confidence = try #require(object["confidence"] as? [String: Double])
    }
}
