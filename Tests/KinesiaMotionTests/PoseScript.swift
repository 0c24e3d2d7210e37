import Foundation
import KinesiaMotion
public import Testing

/// A generated body whose catalog measures are exactly the angles it is given.
///
/// Image 1000 x 1000 pixels, y down; the patient stands in the middle. Arms move relative to
/// the trunk (so leaning the trunk changes neither shoulder elevation nor elbow flexion);
/// thighs move relative to the image's down (so leaning the trunk does not drift the thighs).
/// In a side view the patient faces +x and both arms and legs move forward; in a front view
/// the left limbs move to +x, the right ones to -x.
struct Body: Sendable {
    /// The angles of one side's limbs.
    struct Limbs: Sendable {
        /// Shoulder elevation relative to the trunk (= `shoulderElevation` with the trunk's down).
        var armElevation = 0.0
        /// Elbow flexion: 0 straight.
        var elbowFlexion = 0.0
        /// Thigh angle from the image's down (= `thighDrift`; = `hipFlexion` with the trunk upright).
        var thighAngle = 0.0
        /// Knee flexion: 0 straight.
        var kneeFlexion = 0.0
    }

    var view: Exercise.View = .side
    /// Trunk lean: the neck moves toward +x.
    var trunkLean = 0.0
    /// Angle of the shoulder line from horizontal.
    var shoulderTilt = 0.0
    /// Angle of the hip line from horizontal.
    var hipTilt = 0.0
    var left = Limbs()
    var right = Limbs()
    /// Size multiplier around the image centre (too far / too close).
    var scale = 1.0
    /// Shift in pixels after scaling.
    var offset = CGPoint.zero
    /// Detector confidence given to every joint (`nil`: no confidence figures).
    var confidence: Double? = 0.9
    /// The image size given to the pose (`nil`: unknown).
    var imageSize: CGSize? = CGSize(width: 1000, height: 1000)

    subscript(side: BodySide) -> Limbs {
        get { side == .left ? left : right }
        set {
            if side == .left { left = newValue } else { right = newValue }
        }
    }

    static let torso = 200.0
    static let upperArm = 130.0
    static let forearm = 120.0
    static let thigh = 200.0
    static let shin = 200.0
    static let root = CGPoint(x: 500, y: 560)

    /// The points of the body.
    func points() -> [Joint: CGPoint] {
        let lean = Self.radians(trunkLean)
        let trunkDown = CGPoint(x: -sin(lean), y: cos(lean))
        let root = Self.root
        let neck = Self.add(root, trunkDown, -Self.torso)
        let frontal = view == .front
        let shoulderHalf = frontal ? 80.0 : 12.0
        let hipHalf = frontal ? 50.0 : 8.0
        let shoulderLine = CGPoint(x: cos(Self.radians(shoulderTilt)), y: sin(Self.radians(shoulderTilt)))
        let hipLine = CGPoint(x: cos(Self.radians(hipTilt)), y: sin(Self.radians(hipTilt)))
        var points: [Joint: CGPoint] = [.root: root, .neck: neck]
        let up = CGPoint(x: -trunkDown.x, y: -trunkDown.y)
        points[.nose] = Self.add(neck, up, 45)
        points[.leftEye] = Self.add(Self.add(neck, up, 55), CGPoint(x: 1, y: 0), 8)
        points[.rightEye] = Self.add(Self.add(neck, up, 55), CGPoint(x: 1, y: 0), -8)
        points[.leftEar] = Self.add(Self.add(neck, up, 50), CGPoint(x: 1, y: 0), 15)
        points[.rightEar] = Self.add(Self.add(neck, up, 50), CGPoint(x: 1, y: 0), -15)
        for side in BodySide.allCases {
            let limbs = self[side]
            let lateral = side == .left ? 1.0 : -1.0
            // Forward (+x) in a side view; outward in a front view.
            let outward = frontal ? lateral : 1.0
            let shoulder = Self.add(neck, shoulderLine, lateral * shoulderHalf)
            let upperArm = Self.rotate(trunkDown, by: -outward * limbs.armElevation)
            let elbow = Self.add(shoulder, upperArm, Self.upperArm)
            let forearm = Self.rotate(upperArm, by: -outward * limbs.elbowFlexion)
            let wrist = Self.add(elbow, forearm, Self.forearm)
            let hip = Self.add(root, hipLine, lateral * hipHalf)
            let thigh = Self.rotate(CGPoint(x: 0, y: 1), by: -outward * limbs.thighAngle)
            let knee = Self.add(hip, thigh, Self.thigh)
            let shin = Self.rotate(thigh, by: outward * limbs.kneeFlexion)
            let ankle = Self.add(knee, shin, Self.shin)
            points[.shoulder(side)] = shoulder
            points[.elbow(side)] = elbow
            points[.wrist(side)] = wrist
            points[.hip(side)] = hip
            points[.knee(side)] = knee
            points[.ankle(side)] = ankle
        }
        let centre = CGPoint(x: 500, y: 500)
        return points.mapValues { point in
            CGPoint(
                x: centre.x + (point.x - centre.x) * scale + offset.x,
                y: centre.y + (point.y - centre.y) * scale + offset.y)
        }
    }

    /// The body as a pose at `time`.
    func pose(at time: Double) -> Pose {
        let points = points()
        let confidences = confidence.map { value in points.mapValues { _ in value } } ?? [:]
        return Pose(points: points, timestamp: time, imageSize: imageSize, confidence: confidences)
    }

    private static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }

    private static func add(_ point: CGPoint, _ direction: CGPoint, _ length: Double) -> CGPoint {
        CGPoint(x: point.x + direction.x * length, y: point.y + direction.y * length)
    }

    /// Rotates `vector` by `degrees` (positive turns +y toward -x, i.e. down toward the left).
    private static func rotate(_ vector: CGPoint, by degrees: Double) -> CGPoint {
        let angle = radians(degrees)
        return CGPoint(
            x: vector.x * cos(angle) - vector.y * sin(angle), y: vector.x * sin(angle) + vector.y * cos(angle)
        )
    }
}

extension Body {
    /// A body at rest for `exercise`, seen from the exercise's view (a side view for
    /// `sideOrFront`), with its primary measure at `value` on `side`.
    init(_ exercise: Exercise, side: BodySide, value: Double) {
        self.init()
        view = exercise.view == .front ? .front : .side
        if exercise.measure == .seatedKneeExtension {
            // Seated: both thighs horizontal, shins hanging.
            left.thighAngle = 90
            left.kneeFlexion = 90
            right.thighAngle = 90
            right.kneeFlexion = 90
        }
        setPrimary(value, exercise: exercise, side: side)
    }

    /// Sets the primary measure of `exercise` on `side` to `value`.
    mutating func setPrimary(_ value: Double, exercise: Exercise, side: BodySide) {
        switch exercise.measure {
        case .shoulderElevation: self[side].armElevation = value
        case .elbowFlexion: self[side].elbowFlexion = value
        case .kneeFlexion: self[side].kneeFlexion = value
        case .hipFlexion, .hipAbduction: self[side].thighAngle = value
        case .seatedKneeExtension: self[side].kneeFlexion = 90 - value
        case .tibiaInclination: self[side].kneeFlexion = value
        case .trunkLean: trunkLean = value
        case .shoulderTilt: shoulderTilt = value
        case .hipTilt: hipTilt = value
        case .upperArmDrift: self[side].armElevation = value
        case .thighDrift: self[side].thighAngle = value
        }
    }

    /// Breaks `rule` on `side`: its measure goes clearly past the limit (for drift rules, moves
    /// clearly more than the limit from where it was).
    mutating func breakRule(_ rule: FormRule, side: BodySide) {
        switch rule.measure {
        case .elbowFlexion: self[side].elbowFlexion = rule.limit + 15
        case .kneeFlexion: self[side].kneeFlexion = rule.limit + 15
        case .trunkLean:
            // Leaning toward the moving limb's side, so that a front-view hip measure grows.
            trunkLean = (view == .front && side == .right ? -1 : 1) * (rule.limit + 10)
        case .shoulderTilt: shoulderTilt = rule.limit + 8
        case .hipTilt: hipTilt = rule.limit + 8
        case .upperArmDrift: self[side].armElevation += rule.limit + 10
        case .thighDrift: self[side].thighAngle += rule.limit + 10
        default: break
        }
    }
}

/// Builds a sequence of poses for one exercise and side: holds, ramps, reps, gaps, at a fixed
/// frame rate with exact timestamps (`frame / fps`).
struct PoseScript {
    let exercise: Exercise
    let side: BodySide
    var fps = 30.0
    private(set) var poses: [Pose] = []
    /// The next frame's number.
    private(set) var frame = 0
    /// Changes applied to every body this script builds (e.g. a different view).
    var base: (inout Body) -> Void = { _ in }

    init(_ exercise: Exercise, side: BodySide = .left, fps: Double = 30) {
        self.exercise = exercise
        self.side = side
        self.fps = fps
    }

    /// The time of the next pose.
    var time: Double { Double(frame) / fps }

    /// The rest value of the primary measure (0 for every catalog exercise).
    static let rest = 0.0

    /// Appends poses for `duration` seconds; `value` gives the primary measure at a fraction
    /// 0..<1 of the segment, `adjust` changes the body at that fraction.
    mutating func segment(
        _ duration: Double, value: (Double) -> Double, adjust: (inout Body, Double) -> Void = { _, _ in }
    ) {
        let count = Int((duration * fps).rounded())
        for index in 0..<count {
            let fraction = Double(index) / Double(count)
            var body = Body(exercise, side: side, value: value(fraction))
            base(&body)
            body.setPrimary(value(fraction), exercise: exercise, side: side)
            adjust(&body, fraction)
            poses.append(body.pose(at: time))
            frame += 1
        }
    }

    /// Holds the primary measure at `value` for `duration` seconds.
    mutating func hold(
        _ value: Double, for duration: Double, adjust: (inout Body, Double) -> Void = { _, _ in }
    ) {
        segment(duration, value: { _ in value }, adjust: adjust)
    }

    /// Moves the primary measure linearly from `start` to `end` over `duration` seconds.
    mutating func ramp(
        from start: Double, to end: Double, over duration: Double,
        adjust: (inout Body, Double) -> Void = { _, _ in }
    ) {
        segment(duration, value: { start + (end - start) * $0 }, adjust: adjust)
    }

    /// One rep: from `rest` up to `peak` and back (a raised cosine) over `duration` seconds.
    mutating func rep(
        peak: Double, rest: Double = rest, duration: Double = 2,
        adjust: (inout Body, Double) -> Void = { _, _ in }
    ) {
        segment(duration, value: { rest + (peak - rest) * (1 - cos(2 * .pi * $0)) / 2 }, adjust: adjust)
    }

    /// Appends empty poses (nobody in view) for `duration` seconds.
    mutating func empty(for duration: Double) {
        let count = Int((duration * fps).rounded())
        for _ in 0..<count {
            poses.append(Pose(timestamp: time, imageSize: CGSize(width: 1000, height: 1000)))
            frame += 1
        }
    }

    /// Appends poses built by `make` (given the time) for `duration` seconds.
    mutating func custom(_ duration: Double, _ make: (Double) -> Pose) {
        let count = Int((duration * fps).rounded())
        for _ in 0..<count {
            poses.append(make(time))
            frame += 1
        }
    }

    /// Skips `duration` seconds without any pose.
    mutating func gap(_ duration: Double) {
        frame += Int((duration * fps).rounded())
    }

    /// A clean rep's peak for `exercise`: comfortably above its minimum peak.
    static func cleanPeak(_ exercise: Exercise) -> Double {
        switch exercise.kind {
        case .reps(_, _, let minPeak): minPeak + max(10, minPeak / 2)
        case .hold(let threshold, _): threshold + 15
        }
    }
}

/// Runs `poses` through a new analyzer; returns it and every event.
func analyze(
    _ poses: [Pose], exercise: Exercise, side: BodySide = .left,
    prepare: (inout MotionAnalyzer) -> Void = { _ in }
) -> (analyzer: MotionAnalyzer, events: [MotionEvent]) {
    var analyzer = MotionAnalyzer(exercise: exercise, side: side)
    prepare(&analyzer)
    var events: [MotionEvent] = []
    for pose in poses { events += analyzer.process(pose) }
    return (analyzer, events)
}

extension MotionEvent {
    /// The rep of a `repCompleted` or `repRejected` event.
    var rep: Rep? {
        switch self {
        case .repCompleted(let rep), .repRejected(let rep): rep
        default: nil
        }
    }

    /// Whether this is a rep, hold, fault or baseline event (not visibility or setup).
    var isCounting: Bool {
        switch self {
        case .visibilityChanged, .setupChanged: false
        default: true
        }
    }
}

/// A provider over a fixed list of poses.
struct PoseList: PoseProvider {
    let frames: [Pose]

    func poses() -> AsyncStream<Pose> {
        let frames = frames
        return AsyncStream(bufferingPolicy: .unbounded) { continuation in
            for pose in frames { continuation.yield(pose) }
            continuation.finish()
        }
    }
}

extension Exercise: CustomTestStringConvertible {
    var testDescription: String { id }
}
