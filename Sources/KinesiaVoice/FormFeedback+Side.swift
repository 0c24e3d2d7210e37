public import KinesiaMotion

extension FormFeedback {
    /// Whether the fault concerns one limb, so that a voice following both sides names the side
    /// it came from (`"Left side: Straighten your elbow"`): an elbow, a knee, an upper arm or a
    /// thigh. The trunk, the line of the shoulders and the line of the hips belong to both
    /// sides: their correction names no side, and the same text from the other side within the
    /// repeat window is not said twice.
    public var concernsOneSide: Bool {
        switch self {
        case .keepUpperArmStill, .keepThighStill, .keepElbowStraight, .keepKneeStraight: true
        case .keepTrunkUpright, .keepShouldersLevel, .keepHipsLevel: false
        }
    }
}
