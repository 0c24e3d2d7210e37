/// A point of the body, following the 19 points of Vision's 2D body detector.
///
/// Raw values are stable API: they are the names used in recordings, on the wire and in every
/// JSON the project writes. The order of `allCases` is stable too: it is the joint's
/// ``index``, which compact encodings use.
///
/// ```swift
/// Joint.knee(.left)       // .leftKnee
/// Joint.shoulder(side)    // depends on the side
/// ```
public enum Joint: String, CaseIterable, Sendable, Hashable, Codable {
    /// The head.
    case nose, leftEye, rightEye, leftEar, rightEar
    /// The midline: `neck` between the shoulders, `root` at the centre of the hips.
    case neck, root
    /// The arms.
    case leftShoulder, rightShoulder, leftElbow, rightElbow, leftWrist, rightWrist
    /// The legs. There are no toe or finger points: ankle dorsiflexion is measured as the
    /// tibia's inclination.
    case leftHip, rightHip, leftKnee, rightKnee, leftAnkle, rightAnkle

    /// The joint's stable position in `allCases` (0...18).
    @inlinable
    public var index: Int {
        switch self {
        case .nose: 0
        case .leftEye: 1
        case .rightEye: 2
        case .leftEar: 3
        case .rightEar: 4
        case .neck: 5
        case .root: 6
        case .leftShoulder: 7
        case .rightShoulder: 8
        case .leftElbow: 9
        case .rightElbow: 10
        case .leftWrist: 11
        case .rightWrist: 12
        case .leftHip: 13
        case .rightHip: 14
        case .leftKnee: 15
        case .rightKnee: 16
        case .leftAnkle: 17
        case .rightAnkle: 18
        }
    }

    /// The joint at a stable ``index``, or `nil` when the index is out of range.
    public init?(index: Int) {
        guard Joint.allCases.indices.contains(index) else { return nil }
        self = Joint.allCases[index]
    }

    /// The side of the body the joint belongs to, or `nil` for `nose`, `neck` and `root`.
    public var side: BodySide? {
        switch self {
        case .leftEye, .leftEar, .leftShoulder, .leftElbow, .leftWrist, .leftHip, .leftKnee,
            .leftAnkle:
            .left
        case .rightEye, .rightEar, .rightShoulder, .rightElbow, .rightWrist, .rightHip,
            .rightKnee, .rightAnkle:
            .right
        case .nose, .neck, .root: nil
        }
    }

    /// The same joint on the other side of the body (`nose`, `neck` and `root` map to themselves).
    public var mirrored: Joint {
        switch self {
        case .leftEye: .rightEye
        case .rightEye: .leftEye
        case .leftEar: .rightEar
        case .rightEar: .leftEar
        case .leftShoulder: .rightShoulder
        case .rightShoulder: .leftShoulder
        case .leftElbow: .rightElbow
        case .rightElbow: .leftElbow
        case .leftWrist: .rightWrist
        case .rightWrist: .leftWrist
        case .leftHip: .rightHip
        case .rightHip: .leftHip
        case .leftKnee: .rightKnee
        case .rightKnee: .leftKnee
        case .leftAnkle: .rightAnkle
        case .rightAnkle: .leftAnkle
        case .nose, .neck, .root: self
        }
    }

    /// `.leftEye` or `.rightEye`.
    public static func eye(_ side: BodySide) -> Joint { side == .left ? .leftEye : .rightEye }
    /// `.leftEar` or `.rightEar`.
    public static func ear(_ side: BodySide) -> Joint { side == .left ? .leftEar : .rightEar }
    /// `.leftShoulder` or `.rightShoulder`.
    public static func shoulder(_ side: BodySide) -> Joint {
        side == .left ? .leftShoulder : .rightShoulder
    }
    /// `.leftElbow` or `.rightElbow`.
    public static func elbow(_ side: BodySide) -> Joint { side == .left ? .leftElbow : .rightElbow }
    /// `.leftWrist` or `.rightWrist`.
    public static func wrist(_ side: BodySide) -> Joint { side == .left ? .leftWrist : .rightWrist }
    /// `.leftHip` or `.rightHip`.
    public static func hip(_ side: BodySide) -> Joint { side == .left ? .leftHip : .rightHip }
    /// `.leftKnee` or `.rightKnee`.
    public static func knee(_ side: BodySide) -> Joint { side == .left ? .leftKnee : .rightKnee }
    /// `.leftAnkle` or `.rightAnkle`.
    public static func ankle(_ side: BodySide) -> Joint { side == .left ? .leftAnkle : .rightAnkle }
}

/// The patient's anatomical side (never the side of the image).
public enum BodySide: String, CaseIterable, Sendable, Hashable, Codable {
    /// The patient's left and right.
    case left, right

    /// The other side: `BodySide.right.opposite == .left`.
    public var opposite: BodySide { self == .left ? .right : .left }
}
