import Foundation
import KinesiaMotion

/// Hand-made squat poses (side view, 30 poses a second) whose knee flexion is exactly the angle
/// given for each side, so that the analytics' figures have known answers.
///
/// Each thigh hangs straight down from its hip; the shin turns forward by the knee flexion.
struct SquatScript {
    static let frameRate = 30.0
    private(set) var poses: [Pose] = []
    private(set) var time = 0.0

    /// The knee flexion of each side (degrees) and the trunk's lean, at the next pose.
    mutating func pose(left: Double, right: Double, trunkLean: Double = 0) {
        var points: [Joint: CGPoint] = [:]
        let root = CGPoint(x: 500, y: 500)
        let lean = trunkLean * .pi / 180
        let neck = CGPoint(x: root.x + 200 * sin(lean), y: root.y - 200 * cos(lean))
        points[.root] = root
        points[.neck] = neck
        points[.nose] = CGPoint(x: neck.x + 30, y: neck.y - 40)
        for (side, flexion) in [(BodySide.left, left), (.right, right)] {
            let offset = side == .left ? 6.0 : -6.0
            let hip = CGPoint(x: root.x + offset, y: root.y)
            let knee = CGPoint(x: hip.x, y: hip.y + 200)
            let angle = flexion * .pi / 180
            let ankle = CGPoint(x: knee.x + 200 * sin(angle), y: knee.y + 200 * cos(angle))
            points[.hip(side)] = hip
            points[.knee(side)] = knee
            points[.ankle(side)] = ankle
            points[.shoulder(side)] = CGPoint(x: neck.x + offset, y: neck.y + 10)
        }
        var confidence: [Joint: Double] = [:]
        for joint in points.keys { confidence[joint] = 0.9 }
        poses.append(
            Pose(
                points: points, timestamp: time, imageSize: CGSize(width: 1000, height: 1000),
                confidence: confidence))
        time += 1 / Self.frameRate
    }

    /// Both sides at `angle` for `seconds`.
    mutating func rest(_ seconds: Double, at angle: Double = 0) {
        for _ in 0..<Int((seconds * Self.frameRate).rounded()) { pose(left: angle, right: angle) }
    }

    /// One rep on each side at once: from 0 up to each side's peak in `up` seconds, held there
    /// `top` seconds, down in `down` seconds, then `rest` seconds at 0. `lean` is the trunk's
    /// lean while at the top.
    mutating func rep(
        left: Double, right: Double, up: Double = 1, top: Double = 1, down: Double = 1, rest: Double = 1,
        lean: Double = 0
    ) {
        let upFrames = Int((up * Self.frameRate).rounded())
        let topFrames = Int((top * Self.frameRate).rounded())
        let downFrames = Int((down * Self.frameRate).rounded())
        for i in 0..<upFrames {
            let f = Double(i + 1) / Double(upFrames)
            pose(left: left * f, right: right * f)
        }
        for _ in 0..<topFrames { pose(left: left, right: right, trunkLean: lean) }
        for i in 0..<downFrames {
            let f = 1 - Double(i + 1) / Double(downFrames)
            pose(left: left * f, right: right * f)
        }
        self.rest(rest)
    }
}
