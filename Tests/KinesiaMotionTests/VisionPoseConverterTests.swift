import Foundation
import KinesiaMotion
import Testing

struct VisionPoseConverterTests {
    typealias Point = VisionPoseConverter.NormalizedPoint
    let size = CGSize(width: 480, height: 640)

    @Test func convertsNormalisedBottomLeftPointsToPixelsWithYDown() {
        let converter = VisionPoseConverter(camera: .back)
        let pose = converter.pose(
            from: [
                .nose: Point(x: 0.5, y: 0.875, confidence: 0.8),
                .leftAnkle: Point(x: 0.25, y: 0, confidence: 0.9),
                .rightWrist: Point(x: 1, y: 1, confidence: 1),
            ], imageSize: size, timestamp: 3.5)
        #expect(pose[.nose] == CGPoint(x: 240, y: 80))  // near the top
        #expect(pose[.leftAnkle] == CGPoint(x: 120, y: 640))  // the bottom edge
        #expect(pose[.rightWrist] == CGPoint(x: 480, y: 0))  // the top-right corner
        #expect(pose.confidence == [.nose: 0.8, .leftAnkle: 0.9, .rightWrist: 1])
        #expect(pose.timestamp == 3.5)
        #expect(pose.imageSize == size)
    }

    @Test func theFrontCameraSwapsEveryPairedJoint() {
        var observation: [Joint: Point] = [:]
        for (index, joint) in Joint.allCases.enumerated() {
            observation[joint] = Point(x: Double(index) / 20, y: 0.5, confidence: 0.9)
        }
        let back = VisionPoseConverter(camera: .back).pose(from: observation, imageSize: size, timestamp: 0)
        let front = VisionPoseConverter(camera: .front).pose(from: observation, imageSize: size, timestamp: 0)
        for joint in Joint.allCases {
            // The point Vision called `joint` is the patient's `joint.mirrored`, at the same place.
            #expect(front[joint.mirrored] == back[joint], "\(joint)")
        }
        #expect(front[.leftElbow] == back[.rightElbow])
        #expect(front[.neck] == back[.neck])
        #expect(front[.nose] == back[.nose])
    }

    @Test func dropsPointsUnderTheMinimumConfidence() {
        let converter = VisionPoseConverter(camera: .back, minimumConfidence: 0.5)
        let pose = converter.pose(
            from: [
                .leftKnee: Point(x: 0.5, y: 0.5, confidence: 0.49),
                .rightKnee: Point(x: 0.5, y: 0.5, confidence: 0.5),
            ], imageSize: size, timestamp: 0)
        #expect(Set(pose.points.keys) == [.rightKnee])
        #expect(Set(pose.confidence.keys) == [.rightKnee])
    }

    @Test func dropsNotFoundAndNonFinitePointsEvenWithAZeroCut() {
        let converter = VisionPoseConverter(camera: .back, minimumConfidence: 0)
        let pose = converter.pose(
            from: [
                .leftKnee: Point(x: 0, y: 0, confidence: 0),
                .rightKnee: Point(x: .nan, y: 0.5, confidence: 0.9),
                .leftHip: Point(x: 0.5, y: .infinity, confidence: 0.9),
                .rightHip: Point(x: 0.5, y: 0.5, confidence: .nan),
                .root: Point(x: 0.5, y: 0.5, confidence: 0.1),
            ], imageSize: size, timestamp: 0)
        #expect(Set(pose.points.keys) == [.root])
    }

    @Test func nobodyDetectedGivesAnEmptyPose() {
        let converter = VisionPoseConverter(camera: .front)
        for observation in [nil, [:]] as [[Joint: Point]?] {
            let pose = converter.pose(from: observation, imageSize: size, timestamp: 7)
            #expect(pose.isEmpty)
            #expect(pose.timestamp == 7)
            #expect(pose.imageSize == size)
        }
    }

    /// `VisionPoseProvider` (iOS only, so not built here) defaults to the front camera and a
    /// 0.3 confidence cut and passes both on; a converter made on its own must agree with it.
    @Test func theDefaultsAreThoseOfVisionPoseProvider() {
        let converter = VisionPoseConverter()
        #expect(converter.minimumConfidence == 0.3)
        #expect(converter.camera == .front)
    }
}
