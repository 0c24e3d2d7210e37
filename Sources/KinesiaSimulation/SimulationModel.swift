import Foundation
import KinesiaMotion

/// Everything fixed for one simulator: the exercise's motion, the body, where it stands in the
/// image, and the seeded choices made once (facing, sway phases, confidence levels).
struct SimulationModel: Sendable {
    let motion: ExerciseMotion
    let options: SimulationOptions
    /// The sides that move, after exercises done on both legs were made `together`.
    let sides: SimulatedSides
    /// Side view: `+1` faces the image's right (right side near the camera), `-1` left.
    let facing: Double
    let skeleton: ExerciseMotion.Skeleton
    /// Joints the camera sees, by ``Joint/index``.
    let visible: [Bool]
    /// Indices of the visible joints.
    let visibleIndices: [Int]
    /// Typical confidence of each joint.
    let confidence: [Double]
    /// Phases of the slow sways of the clean body.
    let phases: [Double]
    /// Pixels per body unit.
    let scale: Double
    /// Where body-unit origin lands in the image, in pixels.
    let offset: Vec

    /// Stream numbers of the seeded generators.
    enum Stream: UInt64 {
        case skeleton = 1, sway, facing, confidence
        case plan = 16, noise, dropouts, jitter
    }

    /// The generator for `stream` of block `block`.
    func random(_ stream: Stream, block: Int = 0) -> SimulationRandom {
        SimulationRandom(seed: options.seed, stream: stream.rawValue &+ 64 &* UInt64(block))
    }

    init(motion: ExerciseMotion, options: SimulationOptions) {
        self.motion = motion
        self.options = options
        sides = motion.isBilateral ? .together : options.sides
        var random = SimulationRandom(seed: options.seed, stream: Stream.skeleton.rawValue)
        skeleton = ExerciseMotion.Skeleton(random: &random)

        random = SimulationRandom(seed: options.seed, stream: Stream.facing.rawValue)
        switch sides {
        case .left: facing = -1
        case .right: facing = 1
        case .alternating, .together: facing = random.chance(0.5) ? 1 : -1
        }
        let visible = motion.visibleJoints(facing: facing)
        self.visible = visible
        visibleIndices = visible.indices.filter { visible[$0] }

        random = SimulationRandom(seed: options.seed, stream: Stream.sway.rawValue)
        phases = (0..<6).map { _ in random.uniform(in: 0...(2 * .pi)) }

        random = SimulationRandom(seed: options.seed, stream: Stream.confidence.rawValue)
        let nearSide: BodySide = facing > 0 ? .right : .left
        let isFront = motion.isFrontView
        confidence = Joint.allCases.map { joint in
            if !isFront, joint.side == nearSide.opposite { return random.uniform(in: 0.6...0.75) }
            return random.uniform(in: 0.8...0.95)
        }

        // Place the body: the whole range of its movement fits the image with a margin.
        var placement = (scale: 1.0, offset: Vec.zero)
        let box = Self.envelope(
            motion: motion, sides: sides, skeleton: skeleton, facing: facing, visible: visible)
        let width = Double(options.imageSize.width)
        let height = Double(options.imageSize.height)
        let boxWidth = max(box.max.x - box.min.x, 1e-6)
        let boxHeight = max(box.max.y - box.min.y, 1e-6)
        placement.scale = min(0.82 * height / boxHeight, 0.88 * width / boxWidth)
        let center = 0.5 * (box.min + box.max)
        placement.offset = Vec(x: width / 2, y: height / 2) - placement.scale * center
        scale = placement.scale
        offset = placement.offset
    }

    // MARK: - The body at an instant

    /// The clean body for `primary` values, with `fault` (its rule, strength and the sides that
    /// break it) applied, at `time` (for the slow sways).
    static func compose(
        motion: ExerciseMotion, facing: Double, phases: [Double], primary: PerSide<Double>,
        fault: (rule: FormRule, blend: Double, sides: [BodySide])?, time: Double, leftRole: Double
    ) -> BodyState {
        func sway(_ index: Int, period: Double) -> Double {
            sin(2 * .pi * time / period + phases[index])
        }
        let span = max(motion.peakRange.upperBound - motion.rest, 1)
        var state = BodyState(
            primary: primary,
            activity: PerSide(
                min(1, max(0, (primary.left - motion.rest) / span)),
                min(1, max(0, (primary.right - motion.rest) / span))),
            lean: 0, shoulderTilt: 0, hipTilt: 0,
            elbowBend: PerSide(both: 0), kneeBend: PerSide(both: 0), drift: PerSide(both: 0),
            role: PerSide(leftRole, 1 - leftRole))

        // Clean values with their slow sways.
        let meanPrimary = 0.5 * (primary.left + primary.right)
        let leanSign = motion.isFrontView ? 1 : facing * motion.leanDirection
        let cleanLean =
            motion.cleanLean(primary: meanPrimary) + motion.wobbleAmplitude(.trunkLean) * sway(0, period: 4.1)
        state.lean = leanSign * cleanLean
        state.shoulderTilt = motion.wobbleAmplitude(.shoulderTilt) * sway(1, period: 3.3)
        state.hipTilt = motion.wobbleAmplitude(.hipTilt) * sway(2, period: 3.9)
        let driftMeasure: Measure = motion.body == .elbowFlexion ? .upperArmDrift : .thighDrift
        for side in BodySide.allCases {
            let phase = side == .left ? 0.0 : 1.3
            state.elbowBend[side] =
                motion.cleanElbowBend + motion.wobbleAmplitude(.elbowFlexion)
                * sin(2 * .pi * time / 2.7 + phase)
            state.kneeBend[side] = motion.cleanKneeBend + 0.5 * sin(2 * .pi * time / 3.1 + phase)
            state.drift[side] =
                motion.cleanDrift + motion.wobbleAmplitude(driftMeasure) * sway(3, period: 2.9 + phase)
        }

        // The fault: the rule's measure blends towards a value clearly beyond its limit.
        guard let fault, fault.blend > 0 else { return state }
        let b = fault.blend
        let limit = fault.rule.limit
        let margin = ExerciseMotion.faultMargin(limit: limit)
        // The side the fault leans towards or raises (a single moving side, else the left).
        let raised: Double = fault.sides.count == 1 && fault.sides[0] == .right ? -1 : 1
        switch fault.rule.measure {
        case .trunkLean:
            // Front view: lean away from the moving limb; side view: the exercise's cheat.
            let sign = motion.isFrontView ? -raised : leanSign
            state.lean = state.lean * (1 - b) + sign * (limit + margin) * b
        case .shoulderTilt:
            state.shoulderTilt = state.shoulderTilt * (1 - b) + raised * (limit + margin) * b
        case .hipTilt:
            state.hipTilt = state.hipTilt * (1 - b) + raised * (limit + margin) * b
        case .elbowFlexion:
            for side in fault.sides {
                state.elbowBend[side] = state.elbowBend[side] * (1 - b) + (limit + margin) * b
            }
        case .kneeFlexion:
            for side in fault.sides {
                state.kneeBend[side] = state.kneeBend[side] * (1 - b) + (limit + margin) * b
            }
        case .upperArmDrift, .thighDrift:
            for side in fault.sides {
                state.drift[side] += (limit + margin) * b
            }
        default:
            break
        }
        return state
    }

    /// The intended body at `time` in `script`.
    func state(at time: Double, in script: SimulationScript) -> BodyState {
        var primary = PerSide(both: motion.rest)
        var fault: (rule: FormRule, blend: Double, sides: [BodySide])?
        if let rep = script.rep(at: time) {
            let value = rep.value(at: time)
            for side in rep.sides { primary[side] = value }
            if let rule = rep.fault {
                fault = (rule, rep.faultBlend(at: time), rep.sides)
            }
        }
        return Self.compose(
            motion: motion, facing: facing, phases: phases, primary: primary, fault: fault, time: time,
            leftRole: script.leftRole(at: time))
    }

    /// The joints of `state` in image pixels, by ``Joint/index``.
    func pixels(_ state: BodyState) -> [Vec] {
        var points = motion.joints(state, skeleton: skeleton, facing: facing)
        for index in points.indices { points[index] = offset + scale * points[index] }
        return points
    }

    /// The bounding box, in body units, of the visible joints over the whole range of the
    /// movement, with every fault at full strength.
    static func envelope(
        motion: ExerciseMotion, sides: SimulatedSides, skeleton: ExerciseMotion.Skeleton, facing: Double,
        visible: [Bool]
    ) -> (min: Vec, max: Vec) {
        var low = Vec(x: .infinity, y: .infinity)
        var high = Vec(x: -.infinity, y: -.infinity)
        let phases = [Double](repeating: 0, count: 6)
        let groups: [[BodySide]] =
            switch sides {
            case .left: [[.left]]
            case .right: [[.right]]
            case .alternating: [[.left], [.right]]
            case .together: [[.left, .right]]
            }
        let roles: [Double] =
            switch sides {
            case .left: [1]
            case .right: [0]
            case .alternating: [0, 0.5, 1]
            case .together: [0.5]
            }
        let rules: [FormRule?] = [nil] + motion.exercise.formRules.map { $0 }
        let top = motion.peakRange.upperBound + (motion.isHold ? ScriptedRep.swayAmplitude : 0)
        for group in groups {
            for step in 0...16 {
                let value = motion.rest + (top - motion.rest) * Double(step) / 16
                var primary = PerSide(both: motion.rest)
                for side in group { primary[side] = value }
                for rule in rules {
                    for role in roles {
                        for time in [0.0, 1.0, 2.0] {
                            let state = compose(
                                motion: motion, facing: facing, phases: phases, primary: primary,
                                fault: rule.map { ($0, 1, group) }, time: time, leftRole: role)
                            let points = motion.joints(state, skeleton: skeleton, facing: facing)
                            for (index, point) in points.enumerated() where visible[index] {
                                low = Vec(x: min(low.x, point.x), y: min(low.y, point.y))
                                high = Vec(x: max(high.x, point.x), y: max(high.y, point.y))
                            }
                        }
                    }
                }
            }
        }
        return (low, high)
    }
}
