import KinesiaMotion

/// The intended, noise-free state of the body at one instant, in degrees.
struct BodyState: Sendable {
    /// The primary measure of each side.
    var primary: PerSide<Double>
    /// How far each side is into its movement, 0 (rest) ... 1 (highest peak): the foot of a
    /// moving leg stops carrying the body.
    var activity: PerSide<Double>
    /// Trunk lean, signed: positive leans the neck towards the image's right.
    var lean: Double
    /// Front view: the shoulder line's tilt, positive with the left shoulder up.
    var shoulderTilt: Double
    /// Front view: the hip line's tilt, positive with the left hip up.
    var hipTilt: Double
    /// Elbow bend of each arm (straight-arm exercises).
    var elbowBend: PerSide<Double>
    /// Knee bend of each leg (straight-leg exercises).
    var kneeBend: PerSide<Double>
    /// Upper arm or thigh angle from vertical; seated: the thigh's lift off the chair.
    var drift: PerSide<Double>
    /// Knee-to-wall lunge: 1 for the front leg, 0 for the back leg (in between while stepping).
    var role: PerSide<Double>
}

extension ExerciseMotion {
    /// The value `measure` must have in the poses of `state` on `side`, for the measures the
    /// exercise drives (its primary measure and its form rules' measures); `nil` for others.
    func intendedValue(of measure: Measure, side: BodySide, in state: BodyState) -> Double? {
        if measure == exercise.measure { return state.primary[side] }
        switch measure {
        case .trunkLean:
            return abs(state.lean)
        case .shoulderTilt:
            return isFrontView ? abs(state.shoulderTilt) : nil
        case .hipTilt:
            return isFrontView ? abs(state.hipTilt) : nil
        case .elbowFlexion:
            return body == .shoulderFlexion || body == .shoulderAbduction ? state.elbowBend[side] : nil
        case .kneeFlexion:
            return body == .hipAbduction ? state.kneeBend[side] : nil
        case .upperArmDrift:
            return body == .elbowFlexion ? state.drift[side] : nil
        case .thighDrift:
            switch body {
            case .kneeFlexion: return state.drift[side]
            case .kneeExtension: return 90 + state.drift[side]
            default: return nil
            }
        default:
            return nil
        }
    }
}
