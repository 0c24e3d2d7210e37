import Foundation
import KinesiaMotion
import KinesiaTestSupport
import Testing

struct RecordingsTests {
    // MARK: - Real recordings

    @Test(arguments: RecordingFixtures.allRecordings)
    func readsEveryLineOfTheRealRecordings(_ name: String) throws {
        let url = RecordingFixtures.recording(name)
        let poses = try JSONLinesRecording.load(contentsOf: url)
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        #expect(poses.count == lines.count)
        #expect(poses.allSatisfy { $0.imageSize != nil })
        #expect(zip(poses, poses.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
    }

    @Test func readsTheFirstPoseOfTheBalanceRecordingExactly() throws {
        let poses = try JSONLinesRecording.load(
            contentsOf: RecordingFixtures.recording("p2s_balance_cam01_openpose25b.jsonl"))
        let first = try #require(poses.first)
        #expect(poses.count == 100)
        #expect(first.timestamp == 0)
        #expect(first.imageSize == CGSize(width: 1080, height: 1920))
        #expect(first[.leftKnee] == CGPoint(x: 457.99, y: 920.55))
        #expect(first.confidence[.leftKnee] == 0.6408)
        #expect(first[.leftEar] == nil)
        #expect(first.points.count == 18)
        #expect(poses[1].timestamp == 0.016667)
    }

    @Test func keepsTheEmptyPosesOfTheWalkRecording() async throws {
        try await offCooperativePool(.computing) {
            let poses = try JSONLinesRecording.load(
                contentsOf: RecordingFixtures.recording("s2d_demo_walk_mediapipe.jsonl"))
            #expect(poses.count == 201)
            #expect(poses.prefix(46).allSatisfy { $0.isEmpty })
            #expect(!poses[46].isEmpty)
        }
    }

    @Test(arguments: RecordingFixtures.allRecordings)
    func encodingEveryPoseReadsBackTheSamePose(_ name: String) throws {
        let poses = try JSONLinesRecording.load(contentsOf: RecordingFixtures.recording(name))
        for pose in poses {
            let decoded = try PoseJSONLine.decode(PoseJSONLine.encode(pose))
            #expect(decoded == pose)
        }
    }

    @Test func encodesKeysAndJointsInAFixedOrder() {
        let pose = Pose(
            points: [.rightAnkle: CGPoint(x: 3, y: 4.5), .nose: CGPoint(x: 1, y: 2)], timestamp: 0.5,
            imageSize: CGSize(width: 640, height: 480), confidence: [.rightAnkle: 0.25, .nose: 1])
        #expect(
            PoseJSONLine.encode(pose)
                == #"{"t":0.5,"w":640,"h":480,"points":{"nose":[1.0,2.0],"rightAnkle":[3.0,4.5]},"confidence":{"nose":1.0,"rightAnkle":0.25}}"#
        )
        #expect(PoseJSONLine.encode(Pose(timestamp: 2)) == #"{"t":2.0,"points":{},"confidence":{}}"#)
    }

    @Test func decodesAMinimalLineWithoutSizeOrConfidence() throws {
        let pose = try PoseJSONLine.decode(#"  {"t": 1.25, "points": {"leftHip": [10, 20]}}  "#)
        #expect(pose == Pose(points: [.leftHip: CGPoint(x: 10, y: 20)], timestamp: 1.25))
    }

    @Test func theRecordingIsAPoseProvider() async throws {
        let recording = try JSONLinesRecording(
            contentsOf: RecordingFixtures.recording("p2s_balance_cam03_openpose25b.jsonl"))
        var timestamps: [Double] = []
        for await pose in recording.poses() { timestamps.append(pose.timestamp) }
        #expect(timestamps == recording.recordedPoses.map(\.timestamp))
        #expect(timestamps.count == 100)
    }

    @Test func recordingLoadPicksTheReaderFromThePath() async throws {
        try await offCooperativePool(.computing) {
            let jsonl = try Recording.load(RecordingFixtures.recording("s2d_demo_walk_mediapipe.jsonl"))
            #expect(jsonl.count == 201)
            let folder = try Recording.load(RecordingFixtures.openPose("coco"))
            #expect(folder.count == 12)
            let single = try Recording.load(RecordingFixtures.openPose("coco/frame_0_keypoints.json"))
            #expect(single.count == 1)
            #expect(single[0].points == folder[0].points)
        }
    }

    // MARK: - Malformed input

    /// Lines that must be refused, with what the error must say.
    static let malformedLines: [(line: String, kind: RecordingError.Kind, mentions: String)] = [
        (#"{"t": 1, "points": {"leftToe": [1, 2]}}"#, .invalidPose, "unknown joint \"leftToe\""),
        (#"{"t": "1", "points": {}}"#, .invalidPose, "\"t\" must be a number"),
        (#"{"points": {}}"#, .invalidPose, "missing key \"t\""),
        (#"{"t": 1}"#, .invalidPose, "missing key \"points\""),
        (#"{"t": 1, "points": {"nose": [1]}}"#, .invalidPose, "point \"nose\""),
        (#"{"t": 1, "points": {"nose": [1, "2"]}}"#, .invalidPose, "point \"nose\""),
        (#"{"t": 1, "points": {"nose": {"x": 1, "y": 2}}}"#, .invalidPose, "point \"nose\""),
        (#"{"t": 1, "points": [], "confidence": {}}"#, .invalidPose, "\"points\" must be an object"),
        (#"{"t": 1, "points": {}, "confidence": {"nose": 1.5}}"#, .invalidPose, "within 0...1"),
        (#"{"t": 1, "points": {}, "confidence": {"nose": true}}"#, .invalidPose, "confidence of \"nose\""),
        (#"{"t": 1, "points": {}, "confidence": {"elbow": 0.5}}"#, .invalidPose, "unknown joint \"elbow\""),
        (#"{"t": 1, "w": 640, "points": {}}"#, .invalidPose, "together"),
        (#"{"t": 1, "w": 0, "h": 480, "points": {}}"#, .invalidPose, "positive"),
        (#"{"t": 1, "points": {}, "extra": 1}"#, .invalidPose, "unknown key \"extra\""),
        (#"{"t": NaN, "points": {}}"#, .invalidJSON, "invalid JSON"),
        (#"{"t": 1e999, "points": {}}"#, .invalidJSON, "out of range"),
        (#"{"t": 1, "points": {"nose": [Infinity, 2]}}"#, .invalidJSON, "invalid JSON"),
        (#"{"t": 1, "points": {"#, .invalidJSON, "invalid JSON"),
        (#"[1, 2]"#, .invalidPose, "must be an object"),
    ]

    @Test(arguments: malformedLines.indices)
    func refusesAMalformedLineWithATypedError(_ index: Int) {
        let (line, kind, mentions) = Self.malformedLines[index]
        #expect {
            _ = try PoseJSONLine.decode(line)
        } throws: { error in
            guard let error = error as? RecordingError else { return false }
            return error.kind == kind && error.detail.contains(mentions)
        }
    }

    @Test func aMalformedLineInAFileNamesTheFileAndTheLine() throws {
        let folder = try RecordingFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("broken.jsonl")
        let text = """
            {"t": 0, "points": {}}

            {"t": 0.1, "points": {"nose": [1, 2]}}\r
            {"t": 0.2, "points": {"leftToe": [1, 2]}}
            """
        try Data(text.utf8).write(to: url)
        #expect(
            throws: RecordingError(
                .invalidPose, file: url.path, line: 4, column: 34,
                detail: "unknown joint \"leftToe\" in \"points\"")
        ) {
            try JSONLinesRecording.load(contentsOf: url)
        }
        do {
            _ = try JSONLinesRecording.load(contentsOf: url)
        } catch {
            #expect(error.description == "\(url.path):4:34: unknown joint \"leftToe\" in \"points\"")
        }
    }

    @Test func blankLinesAndWindowsLineEndingsAreAccepted() throws {
        let data = Data("{\"t\": 0, \"points\": {}}\r\n\r\n   \n{\"t\": 1, \"points\": {}}\r\n".utf8)
        let poses = try JSONLinesRecording.decode(data, file: "x.jsonl")
        #expect(poses.map(\.timestamp) == [0, 1])
        #expect(try JSONLinesRecording.decode(Data()).isEmpty)
    }

    @Test func aTruncatedLastLineIsAnError() {
        let data = Data("{\"t\": 0, \"points\": {}}\n{\"t\": 1, \"poi".utf8)
        #expect(
            throws: RecordingError(
                .invalidJSON, file: "cut.jsonl", line: 2, column: 10,
                detail: "invalid JSON: unterminated string")
        ) {
            try JSONLinesRecording.decode(data, file: "cut.jsonl")
        }
    }

    @Test func aDuplicateKeyIsAnErrorAtItsLineAndColumn() {
        let data = Data("{\"t\": 0, \"points\": {}}\n{\"t\": 1, \"points\": {}, \"t\": 2}\n".utf8)
        #expect(
            throws: RecordingError(
                .invalidJSON, file: "twice.jsonl", line: 2, column: 24,
                detail: "invalid JSON: duplicate key \"t\"")
        ) {
            try JSONLinesRecording.decode(data, file: "twice.jsonl")
        }
    }

    @Test func aWrongValueIsReportedAtItsColumn() throws {
        #expect(
            throws: RecordingError(
                .invalidPose, column: 7, detail: "\"t\" must be a number, found a string")
        ) {
            try PoseJSONLine.decode(#"{"t": "0", "points": {}}"#)
        }
        let error = RecordingError(.invalidPose, file: "a.jsonl", line: 3, column: 7, detail: "bad")
        #expect(error.description == "a.jsonl:3:7: bad")
        #expect(RecordingError(.invalidPose, column: 7, detail: "bad").description == "column 7: bad")
    }

    @Test func aMissingFileIsAClearError() {
        let url = URL(fileURLWithPath: "/nonexistent/recording.jsonl")
        #expect(throws: RecordingError(.fileNotFound, file: url.path, detail: "no such file")) {
            try JSONLinesRecording.load(contentsOf: url)
        }
        #expect(throws: RecordingError(.fileNotFound, file: url.path, detail: "no such file or folder")) {
            try Recording.load(url)
        }
    }

    @Test func aFolderIsNotAJSONLinesFile() {
        let url = RecordingFixtures.openPose("coco")
        #expect {
            try JSONLinesRecording.load(contentsOf: url)
        } throws: { error in
            (error as? RecordingError)?.kind == .unreadable
        }
    }
}
