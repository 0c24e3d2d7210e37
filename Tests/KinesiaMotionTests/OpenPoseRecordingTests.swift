import Foundation
import KinesiaMotion
import Testing

struct OpenPoseRecordingTests {
    /// The recording the fixtures were generated from (see scripts/make-openpose-fixtures.py).
    static let source: [Pose] = {
        let url = RecordingFixtures.recording("p2s_balance_cam01_openpose25b.jsonl")
        return Array((try? JSONLinesRecording.load(contentsOf: url))?.prefix(12) ?? [])
    }()

    static let folders: [(name: String, format: OpenPoseFormat)] = [
        ("body25b", .body25B), ("body25", .body25), ("coco", .coco),
    ]

    static func load(_ name: String, format: OpenPoseFormat?) throws -> [Pose] {
        try OpenPoseRecording.load(
            folder: RecordingFixtures.openPose(name), options: .init(format: format, fps: 60))
    }

    /// The source pose as the fixture's frame `index` must read back: frame 5 is empty, frame 7
    /// lost its low-confidence left wrist and its right elbow at (0, 0).
    static func expected(_ index: Int) -> Pose {
        var pose = source[index]
        pose.imageSize = nil
        if index == 5 {
            pose.points = [:]
            pose.confidence = [:]
        }
        if index == 7 {
            for joint in [Joint.leftWrist, .rightElbow] {
                pose.points[joint] = nil
                pose.confidence[joint] = nil
            }
        }
        return pose
    }

    static func expectClose(
        _ actual: Pose, _ expected: Pose, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(actual.timestamp == expected.timestamp || abs(actual.timestamp - expected.timestamp) < 1e-6)
        #expect(Set(actual.points.keys) == Set(expected.points.keys), sourceLocation: sourceLocation)
        for (joint, point) in expected.points {
            guard let other = actual.points[joint] else { continue }
            #expect(
                abs(other.x - point.x) < 0.006 && abs(other.y - point.y) < 0.006, "\(joint)",
                sourceLocation: sourceLocation)
            #expect(
                actual.confidence[joint] == expected.confidence[joint], "\(joint)",
                sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: folders.map(\.name))
    func everyOrderReadsBackTheRecording(_ name: String) throws {
        #expect(Self.source.count == 12)
        let poses = try Self.load(name, format: name == "body25b" ? .body25B : nil)
        #expect(poses.count == 12)
        for (index, pose) in poses.enumerated() {
            Self.expectClose(pose, Self.expected(index))
        }
    }

    @Test func framesAreTimedFromTheFPSInFileNameOrder() throws {
        // coco's names are not zero-padded: frame_10 must come after frame_9, not after frame_1.
        let poses = try Self.load("coco", format: nil)
        #expect(poses.map(\.timestamp) == (0..<12).map { Double($0) / 60 })
        Self.expectClose(poses[10], Self.expected(10))
        let thirty = try OpenPoseRecording.load(folder: RecordingFixtures.openPose("coco"))
        #expect(thirty[3].timestamp == 0.1)
    }

    @Test func bodyTwentyFiveBDerivesNeckAndRootIgnoringTheUpperNeck() throws {
        let pose = try Self.load("body25b", format: .body25B)[0]
        let left = try #require(pose[.leftShoulder]), right = try #require(pose[.rightShoulder])
        #expect(pose[.neck] == CGPoint(x: (left.x + right.x) / 2, y: (left.y + right.y) / 2))
        let leftHip = try #require(pose[.leftHip]), rightHip = try #require(pose[.rightHip])
        #expect(pose[.root] == CGPoint(x: (leftHip.x + rightHip.x) / 2, y: (leftHip.y + rightHip.y) / 2))
        #expect(
            pose.confidence[.neck] == min(pose.confidence[.leftShoulder]!, pose.confidence[.rightShoulder]!))
    }

    @Test func cocoDerivesOnlyTheRoot() throws {
        let pose = try Self.load("coco", format: nil)[0]
        // The neck is the file's keypoint 1 (the recording's value), the root the hips' midpoint.
        #expect(pose[.neck] == Self.source[0][.neck])
        let leftHip = try #require(pose[.leftHip]), rightHip = try #require(pose[.rightHip])
        #expect(pose[.root] == CGPoint(x: (leftHip.x + rightHip.x) / 2, y: (leftHip.y + rightHip.y) / 2))
    }

    @Test func bodyTwentyFiveTakesNeckAndRootFromTheFile() throws {
        let pose = try Self.load("body25", format: nil)[0]
        #expect(pose[.neck] == Self.source[0][.neck])
        #expect(pose[.root] == Self.source[0][.root])
    }

    @Test func detectsTheOrderFromTheKeypointCount() {
        #expect(OpenPoseFormat(keypointCount: 25) == .body25)
        #expect(OpenPoseFormat(keypointCount: 18) == .coco)
        #expect(OpenPoseFormat(keypointCount: 17) == nil)
        #expect(OpenPoseFormat.allCases.map(\.keypointCount) == [25, 25, 18])
    }

    @Test func readingBodyTwentyFiveBAsBodyTwentyFiveGivesWrongJoints() throws {
        // The override matters: both have 25 keypoints.
        let wrong = try Self.load("body25b", format: nil)[0]
        #expect(wrong[.neck] != Self.source[0][.neck])
    }

    @Test func picksTheLargestPersonWhenSeveralAreDetected() throws {
        // Frame 3 lists a half-size copy first: the reader must keep the full-size person.
        for (name, format) in Self.folders {
            let pose = try Self.load(name, format: format)[3]
            Self.expectClose(pose, Self.expected(3))
        }
    }

    @Test func nobodyDetectedGivesAnEmptyPoseWithItsTime() throws {
        let pose = try Self.load("body25", format: nil)[5]
        #expect(pose.isEmpty)
        #expect(pose.timestamp == 5.0 / 60)
    }

    @Test func dropsLowConfidenceAndZeroPoints() throws {
        let data = Data(
            #"{"people":[{"pose_keypoints_2d":[100,50,0.9, 0,0,0.9, 120,80,0.29, 130,90,0.3, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0]}]}"#
                .utf8)
        let pose = try OpenPoseRecording.decodeFrame(
            data, timestamp: 2, options: .init(imageSize: CGSize(width: 640, height: 480)))
        #expect(pose.points == [.nose: CGPoint(x: 100, y: 50), .rightElbow: CGPoint(x: 130, y: 90)])
        #expect(pose.confidence == [.nose: 0.9, .rightElbow: 0.3])
        #expect(pose.imageSize == CGSize(width: 640, height: 480))
        #expect(pose.timestamp == 2)
    }

    @Test func aMalformedFrameNamesItsFile() throws {
        let folder = try RecordingFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"people":[]}"#.utf8).write(to: folder.appendingPathComponent("v_0_keypoints.json"))
        let bad = folder.appendingPathComponent("v_1_keypoints.json")
        try Data(#"{"people":[{"pose_keypoints_2d":[1,2,0.5,4]}]}"#.utf8).write(to: bad)
        #expect {
            try OpenPoseRecording.load(folder: folder)
        } throws: { error in
            guard let error = error as? RecordingError else { return false }
            return error.file == bad.path && error.kind == .invalidPose
                && error.detail.contains("multiple of 3")
        }
    }

    @Test func anUnknownKeypointCountIsAnError() throws {
        let values = Array(repeating: "1", count: 17 * 3).joined(separator: ",")
        #expect {
            try OpenPoseRecording.decodeFrame(
                Data(#"{"people":[{"pose_keypoints_2d":[\#(values)]}]}"#.utf8), timestamp: 0)
        } throws: { error in
            (error as? RecordingError)?.detail.contains("17 keypoints") == true
        }
    }

    @Test func aCountThatContradictsTheOverrideIsAnError() throws {
        #expect(throws: RecordingError.self) {
            try Self.load("coco", format: .body25)
        }
    }

    @Test func anEmptyOrMissingFolderIsAClearError() throws {
        let folder = try RecordingFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: RecordingError(.noFrames, file: folder.path, detail: "no *_keypoints.json file")) {
            try OpenPoseRecording.load(folder: folder)
        }
        let missing = folder.appendingPathComponent("nope")
        #expect(throws: RecordingError(.fileNotFound, file: missing.path, detail: "no such folder")) {
            try OpenPoseRecording.load(folder: missing)
        }
    }

    @Test func theFolderIsAPoseProvider() async throws {
        let recording = try OpenPoseRecording(folder: RecordingFixtures.openPose("body25"))
        var count = 0
        for await _ in recording.poses() { count += 1 }
        #expect(count == 12)
    }
}
