import Foundation
import KinesiaMotion

/// How the simulator moves a body through one catalog exercise: rest and peak values, the clean
/// values of the form rules' measures, the fault targets, and the geometry that turns intended
/// angles into joint positions.
///
/// Every angle is in degrees. Segment directions are "angles from down": `0` points down the
/// image, `90` towards the image's right, `-90` left, `180` up (see ``direction(_:)``). A side
/// view with `facing = +1` shows the patient's right side, facing the image's right; with
/// `facing = -1`, the left side, facing left. A front view shows the patient's left side on
/// the image's right.
struct ExerciseMotion: Sendable {
    /// The geometry family of a catalog exercise.
    enum Body: String, Sendable {
        case shoulderFlexion, shoulderAbduction, elbowFlexion, kneeFlexion, kneeExtension
        case hipFlexion, hipAbduction, squat, ankleDorsiflexion, wallSit
    }

    let exercise: Exercise
    let body: Body
    /// `true` for a frontal view (the patient faces the camera).
    let isFrontView: Bool
    /// Exercises a body does on both legs at once.
    let isBilateral: Bool
    /// The primary measure's value at rest.
    let rest: Double
    /// Where the peaks (or hold levels) of the reps fall.
    let peakRange: ClosedRange<Double>
    /// Holds: the threshold and duration; `nil` for reps.
    let hold: (threshold: Double, seconds: Double)?
    /// Reps: start, end and minimum peak.
    let repLevels: (start: Double, end: Double, minPeak: Double)?
    /// Which way the trunk leans when the patient breaks the trunk rule in a side view
    /// (`+1` forward, `-1` backward).
    let leanDirection: Double
    /// Whether a trunk lean tilts the whole body (when the primary measure is taken against the
    /// trunk, the legs must follow it) rather than the upper body alone.
    let leansWholeBody: Bool

    /// The catalog's geometry for `exercise`, or `nil` when its identifier is not in the catalog.
    /// - Throws: ``SimulationError/unreachablePeak(exercise:minPeak:maximum:)`` when the
    ///   exercise asks for more range than a body has.
    init?(exercise: Exercise) throws(SimulationError) {
        guard let body = Body(rawValue: exercise.id) else { return nil }
        self.exercise = exercise
        self.body = body
        isFrontView = body == .shoulderAbduction || body == .hipAbduction
        isBilateral = body == .squat || body == .wallSit
        leanDirection = (body == .shoulderFlexion || body == .hipFlexion) ? -1 : 1
        leansWholeBody = body == .hipFlexion || body == .hipAbduction

        // Natural rest, natural peaks and the anatomical maximum of the primary measure.
        let natural: (rest: Double, peaks: ClosedRange<Double>, maximum: Double) =
            switch body {
            case .shoulderFlexion: (5, 135...165, 172)
            case .shoulderAbduction: (5, 125...160, 172)
            case .elbowFlexion: (8, 120...140, 150)
            case .kneeFlexion: (3, 90...115, 130)
            case .kneeExtension: (3, 72...86, 88)
            case .hipFlexion: (3, 80...105, 120)
            case .hipAbduction: (2, 32...42, 55)
            case .squat: (3, 90...115, 130)
            case .ankleDorsiflexion: (1.5, 28...38, 45)
            case .wallSit: (3, 85...93, 120)
            }

        switch exercise.kind {
        case .reps(let start, let end, let minPeak):
            hold = nil
            repLevels = (start, end, minPeak)
            // Rest well under the end level; peaks clearly over the minimum peak and the start.
            rest = max(0.5, min(natural.rest, 0.4 * end))
            let low = max(natural.peaks.lowerBound, minPeak + min(15, max(10, 0.15 * minPeak)), start + 15)
            guard low <= natural.maximum - 2 else {
                throw .unreachablePeak(exercise: exercise.id, minPeak: minPeak, maximum: natural.maximum)
            }
            peakRange = low...min(natural.maximum, max(natural.peaks.upperBound, low + 5))
        case .hold(let threshold, let seconds):
            hold = (threshold, seconds)
            repLevels = nil
            let breakLevel = threshold - exercise.sessionRules.holdBreakMargin
            rest = max(0.5, min(natural.rest, 0.4 * breakLevel))
            let low = max(natural.peaks.lowerBound, threshold + 10)
            guard low <= natural.maximum - 2 else {
                throw .unreachablePeak(exercise: exercise.id, minPeak: threshold, maximum: natural.maximum)
            }
            peakRange = low...min(natural.maximum, max(natural.peaks.upperBound, low + 6))
        }
    }

    /// Whether the exercise counts holds rather than reps.
    var isHold: Bool { hold != nil }

    /// The limit of the form rule on `measure`, if the exercise has one.
    func limit(of measure: Measure) -> Double? {
        exercise.formRules.first { $0.measure == measure }?.limit
    }

    // MARK: - Clean values of the form rules' measures

    /// The clean trunk lean for a primary value (degrees, unsigned): a squat leans forward as
    /// it goes down; everything else stands (or sits) nearly upright.
    func cleanLean(primary: Double) -> Double {
        let natural: Double =
            switch body {
            case .squat: 1 + 0.2 * max(0, primary)
            case .wallSit: 4
            case .kneeExtension: 2
            default: 1.5
            }
        // Clean reps stay well within a limit, even one a therapist made stricter.
        guard let limit = limit(of: .trunkLean) else { return natural }
        return min(natural, 0.45 * limit)
    }

    /// The amplitude of the slow sway added to the clean value of `measure`.
    func wobbleAmplitude(_ measure: Measure) -> Double {
        let natural: Double =
            switch measure {
            case .trunkLean: 0.8
            case .shoulderTilt, .hipTilt: 0.6
            case .upperArmDrift, .thighDrift: 0.5
            default: 0.8
            }
        guard let limit = limit(of: measure) else { return natural }
        return min(natural, 0.1 * limit)
    }

    /// The clean elbow bend of a straight-arm exercise, or the natural bend of a relaxed arm.
    var cleanElbowBend: Double {
        guard let limit = limit(of: .elbowFlexion) else { return 12 }
        return min(4, 0.3 * limit)
    }

    /// The clean knee bend of a straight-leg exercise.
    var cleanKneeBend: Double {
        guard let limit = limit(of: .kneeFlexion) else { return 3 }
        return min(3, 0.3 * limit)
    }

    /// The clean drift angle: upper arm or thigh a little forward of vertical, or (seated)
    /// the thigh's lift off the chair.
    var cleanDrift: Double { body == .kneeExtension ? 0 : 3 }

    /// How far beyond a limit an injected fault goes.
    static func faultMargin(limit: Double) -> Double { max(12, 0.4 * limit) }

    // MARK: - Geometry

    /// Proportions of a standing body of height 1 (Winter's anthropometric tables).
    struct Skeleton: Sendable {
        var torso = 0.29
        var upperArm = 0.186
        var forearm = 0.146
        var thigh = 0.245
        var shank = 0.246
        var shoulderHalfFront = 0.12
        var shoulderHalfSide = 0.025
        var hipHalfFront = 0.06
        var hipHalfSide = 0.02
        /// Knee-to-wall lunge: distance between the feet.
        var stance = 0.09

        /// A body whose segments vary by up to 3% (seeded).
        init(random: inout SimulationRandom) {
            func vary(_ value: Double) -> Double { value * random.uniform(in: 0.97...1.03) }
            torso = vary(torso)
            upperArm = vary(upperArm)
            forearm = vary(forearm)
            thigh = vary(thigh)
            shank = vary(shank)
            shoulderHalfFront = vary(shoulderHalfFront)
            hipHalfFront = vary(hipHalfFront)
        }
    }

    /// The unit vector of a direction given as an angle from down (degrees, positive towards
    /// the image's right).
    static func direction(_ degrees: Double) -> Vec {
        let radians = degrees * .pi / 180
        return Vec(x: sin(radians), y: cos(radians))
    }

    /// `vector` rotated so that up becomes the trunk's direction for a lean of `degrees`
    /// (positive towards the image's right).
    static func rotate(_ vector: Vec, by degrees: Double) -> Vec {
        let radians = degrees * .pi / 180
        let c = cos(radians)
        let s = sin(radians)
        return Vec(x: vector.x * c - vector.y * s, y: vector.x * s + vector.y * c)
    }

    /// Which joints a camera sees in this view: a side view hides the far eye and ear.
    func visibleJoints(facing: Double) -> [Bool] {
        var visible = [Bool](repeating: true, count: Joint.allCases.count)
        if !isFrontView {
            let far: BodySide = facing > 0 ? .left : .right
            visible[Joint.eye(far).index] = false
            visible[Joint.ear(far).index] = false
        }
        return visible
    }

    /// The joints of `state`, in body units (height 1, y down), indexed by ``Joint/index``.
    ///
    /// Standing bodies stand with their supporting foot at the origin; a seated body sits with
    /// its root at the origin; the lunge stands with its feet around the origin.
    func joints(_ state: BodyState, skeleton k: Skeleton, facing f: Double) -> [Vec] {
        var p = [Vec](repeating: .zero, count: Joint.allCases.count)
        let dir = Self.direction
        let lean = state.lean
        // +1 on the near side of a side view, -1 on the far side.
        func near(_ side: BodySide) -> Double { (side == .right) == (f > 0) ? 1 : -1 }
        // Outward in a front view: the patient's left is on the image's right.
        func out(_ side: BodySide) -> Double { side == .left ? 1 : -1 }

        func placeUpperBody(root: Vec) {
            p[Joint.root.index] = root
            let neck = root + k.torso * dir(180 - lean)
            p[Joint.neck.index] = neck
            func head(_ joint: Joint, _ x: Double, _ y: Double) {
                p[joint.index] = neck + Self.rotate(Vec(x: x, y: y), by: lean)
            }
            if isFrontView {
                head(.nose, 0, -0.10)
                head(.leftEye, 0.025, -0.115)
                head(.rightEye, -0.025, -0.115)
                head(.leftEar, 0.06, -0.105)
                head(.rightEar, -0.06, -0.105)
                let tilt = state.shoulderTilt * .pi / 180
                let half = Vec(x: k.shoulderHalfFront * cos(tilt), y: -k.shoulderHalfFront * sin(tilt))
                p[Joint.leftShoulder.index] = neck + half
                p[Joint.rightShoulder.index] = neck - half
            } else {
                let nearSide: BodySide = f > 0 ? .right : .left
                head(.nose, f * 0.04, -0.105)
                head(.eye(nearSide), f * 0.03, -0.12)
                head(.ear(nearSide), -f * 0.01, -0.115)
                // Hidden in a side view; placed for completeness, never shown.
                head(.eye(nearSide.opposite), f * 0.03, -0.12)
                head(.ear(nearSide.opposite), -f * 0.01, -0.115)
                for side in BodySide.allCases {
                    let offset = Vec(x: near(side) * f * k.shoulderHalfSide, y: 0)
                    p[Joint.shoulder(side).index] = neck + Self.rotate(offset, by: lean)
                }
            }
        }

        func placeHips(root: Vec, rotation: Double) {
            if isFrontView {
                let tilt = state.hipTilt * .pi / 180
                let half = Vec(x: k.hipHalfFront * cos(tilt), y: -k.hipHalfFront * sin(tilt))
                p[Joint.leftHip.index] = root + half
                p[Joint.rightHip.index] = root - half
            } else {
                for side in BodySide.allCases {
                    let offset = Vec(x: near(side) * f * k.hipHalfSide, y: 0)
                    p[Joint.hip(side).index] = root + Self.rotate(offset, by: rotation)
                }
            }
        }

        func placeArm(_ side: BodySide, upper: Double, fore: Double) {
            let elbow = p[Joint.shoulder(side).index] + k.upperArm * dir(upper)
            p[Joint.elbow(side).index] = elbow
            p[Joint.wrist(side).index] = elbow + k.forearm * dir(fore)
        }

        func placeLeg(_ side: BodySide, thigh: Double, shank: Double) {
            let knee = p[Joint.hip(side).index] + k.thigh * dir(thigh)
            p[Joint.knee(side).index] = knee
            p[Joint.ankle(side).index] = knee + k.shank * dir(shank)
        }

        // The primary measure, the sign of "forward" for each side, and the limbs.
        let value = state.primary
        if body == .ankleDorsiflexion {
            // Knee-to-wall lunge, built from the feet up: both feet on the floor, the front
            // shin inclines, the back shin stays vertical; the hip sits where both thighs meet.
            var knees = PerSide<Vec>(both: .zero)
            for side in BodySide.allCases {
                let ankle = Vec(x: f * k.stance * (state.role[side] - 0.5) + near(side) * f * 0.004, y: 0)
                p[Joint.ankle(side).index] = ankle
                let radians = value[side] * .pi / 180
                knees[side] = ankle + k.shank * Vec(x: f * sin(radians), y: -cos(radians))
                p[Joint.knee(side).index] = knees[side]
            }
            let middle = 0.5 * (knees.left + knees.right)
            let between = knees.right - knees.left
            let distance = between.length
            var up = Vec(x: 0, y: -1)
            if distance > 1e-9 {
                up = (1 / distance) * Vec(x: -between.y, y: between.x)
                if up.y > 0 { up = -1 * up }
            }
            let height = max(0, k.thigh * k.thigh - distance * distance / 4).squareRoot()
            let root = middle + height * up
            placeUpperBody(root: root)
            placeHips(root: root, rotation: 0)
            for side in BodySide.allCases {
                placeArm(side, upper: -lean + f * 70, fore: -lean + f * 115)
            }
            return p
        }

        placeUpperBody(root: .zero)
        placeHips(root: .zero, rotation: leansWholeBody ? lean : 0)
        for side in BodySide.allCases {
            let v = value[side]
            let s = isFrontView ? out(side) : f
            switch body {
            case .shoulderFlexion, .shoulderAbduction:
                let upper = -lean + s * v
                placeArm(side, upper: upper, fore: upper + s * state.elbowBend[side])
                placeLeg(side, thigh: s * 2, shank: s * (isFrontView ? 2 : -1))
            case .elbowFlexion:
                let upper = f * state.drift[side]
                placeArm(side, upper: upper, fore: upper + f * v)
                placeLeg(side, thigh: f * 2, shank: -f * 1)
            case .kneeFlexion:
                placeArm(side, upper: -lean + f * 6, fore: -lean + f * 26)
                let thigh = f * state.drift[side]
                placeLeg(side, thigh: thigh, shank: thigh - f * v)
            case .kneeExtension:
                placeArm(side, upper: -lean + f * 10, fore: -lean + f * 80)
                let lift = state.drift[side]
                placeLeg(side, thigh: f * (90 + lift), shank: f * (v + lift))
            case .hipFlexion:
                placeArm(side, upper: -lean + f * 5, fore: -lean + f * 20)
                let thigh = -lean + f * v
                placeLeg(side, thigh: thigh, shank: thigh - f * min(v, 95))
            case .hipAbduction:
                placeArm(side, upper: -lean + s * 8, fore: -lean + s * 18)
                let thigh = -lean + s * v
                placeLeg(side, thigh: thigh, shank: thigh - s * state.kneeBend[side])
            case .squat:
                let reach = 5 + min(0.7 * 0.5 * (value.left + value.right), 80)
                placeArm(side, upper: -lean + f * reach, fore: -lean + f * (reach + 10))
                placeLeg(side, thigh: f * 0.6 * v, shank: -f * 0.4 * v)
            case .wallSit:
                placeArm(side, upper: -lean + f * 8, fore: -lean + f * 33)
                placeLeg(side, thigh: f * 0.9 * v, shank: -f * 0.1 * v)
            case .ankleDorsiflexion:
                break  // built above
            }
        }

        // Anchor: a seated body on its seat; a standing body on its supporting foot.
        let anchor: Vec
        if body == .kneeExtension {
            anchor = .zero
        } else {
            let left = p[Joint.leftAnkle.index]
            let right = p[Joint.rightAnkle.index]
            // The foot that does not move carries the body; both share when both move.
            let wl = 1 - 0.9 * state.activity.left
            let wr = 1 - 0.9 * state.activity.right
            anchor = Vec(x: (wl * left.x + wr * right.x) / (wl + wr), y: max(left.y, right.y))
        }
        for index in p.indices { p[index] = p[index] - anchor }
        return p
    }
}
