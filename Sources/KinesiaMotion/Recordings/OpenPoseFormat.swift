/// The keypoint order of an OpenPose body model, mapped to ``Joint``.
///
/// OpenPose names sides from the person's point of view ("RShoulder" is the person's right
/// shoulder), so the mapping keeps anatomical sides as the pose contract asks.
///
/// | format | keypoints | neck | root (hip centre) |
/// |---|---|---|---|
/// | ``body25`` | 25 | keypoint 1 | keypoint 8 (`MidHip`) |
/// | ``body25B`` | 25 | midpoint of the shoulders | midpoint of the hips |
/// | ``coco`` | 18 | keypoint 1 | midpoint of the hips |
///
/// BODY_25B's keypoint 17 is the *upper* neck (below the head, not between the shoulders), so it
/// is not used as ``Joint/neck``. Foot, head-top and other extra keypoints have no ``Joint`` and
/// are ignored.
public enum OpenPoseFormat: String, CaseIterable, Sendable, Hashable {
    /// OpenPose's default model (`BODY_25`).
    case body25
    /// The experimental `BODY_25B` model of `openpose_train` (COCO order plus feet).
    case body25B = "body25b"
    /// The 18-keypoint `COCO` model.
    case coco

    /// How many keypoints a person has in this format.
    public var keypointCount: Int { joints.count }

    /// The format for a keypoint count: 25 gives ``body25`` (OpenPose's default; pass
    /// ``body25B`` explicitly for that model, which has as many keypoints), 18 gives ``coco``.
    public init?(keypointCount: Int) {
        switch keypointCount {
        case 25: self = .body25
        case 18: self = .coco
        default: return nil
        }
    }

    /// The ``Joint`` of each keypoint index, `nil` where the keypoint has no counterpart.
    public var joints: [Joint?] {
        switch self {
        case .body25:
            [
                .nose, .neck, .rightShoulder, .rightElbow, .rightWrist, .leftShoulder, .leftElbow,
                .leftWrist, .root, .rightHip, .rightKnee, .rightAnkle, .leftHip, .leftKnee,
                .leftAnkle, .rightEye, .leftEye, .rightEar, .leftEar,
                nil, nil, nil, nil, nil, nil,  // LBigToe, LSmallToe, LHeel, RBigToe, RSmallToe, RHeel
            ]
        case .body25B:
            [
                .nose, .leftEye, .rightEye, .leftEar, .rightEar, .leftShoulder, .rightShoulder,
                .leftElbow, .rightElbow, .leftWrist, .rightWrist, .leftHip, .rightHip, .leftKnee,
                .rightKnee, .leftAnkle, .rightAnkle,
                nil,  // UpperNeck: below the head, not the neck base between the shoulders
                nil,  // HeadTop
                nil, nil, nil, nil, nil, nil,  // LBigToe, LSmallToe, LHeel, RBigToe, RSmallToe, RHeel
            ]
        case .coco:
            [
                .nose, .neck, .rightShoulder, .rightElbow, .rightWrist, .leftShoulder, .leftElbow,
                .leftWrist, .rightHip, .rightKnee, .rightAnkle, .leftHip, .leftKnee, .leftAnkle,
                .rightEye, .leftEye, .rightEar, .leftEar,
            ]
        }
    }

    /// Whether the format has its own neck keypoint (else it is derived from the shoulders).
    public var hasNeck: Bool { self != .body25B }
    /// Whether the format has its own hip-centre keypoint (else it is derived from the hips).
    public var hasRoot: Bool { self == .body25 }
}
