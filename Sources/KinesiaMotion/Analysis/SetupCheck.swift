import Foundation

/// The placement problems of one pose (``SetupIssue``), as a bit mask (bit = position of the
/// issue in ``SetupIssue/allCases``). Debouncing is the analyzer's job.
struct SetupCheck: Sendable {
    private let requiredMask: UInt32
    private let view: Exercise.View
    private let rules: SessionRules

    init(exercise: Exercise, requiredMask: UInt32) {
        self.requiredMask = requiredMask
        view = exercise.view
        rules = exercise.sessionRules
    }

    /// The issues seen in `frame` (a non-empty pose).
    func issues(in frame: PoseFrame) -> UInt32 {
        var issues: UInt32 = 0
        if let width = frame.imageWidth, let height = frame.imageHeight {
            // Too far: the visible body spans under a fraction of the image height.
            if frame.count >= 2, frame.verticalSpan() < rules.tooFarFraction * height {
                issues |= SetupIssue.tooFar.bit
            }
            // Too close or out of frame: a required joint near an edge (a joint exactly at the
            // margin is within it).
            let marginX = rules.edgeMarginFraction * width
            let marginY = rules.edgeMarginFraction * height
            var bits = requiredMask & frame.present
            while bits != 0 {
                let index = bits.trailingZeroBitCount
                bits &= bits - 1
                let point = frame[index]
                let x = Double(point.x)
                let y = Double(point.y)
                if x <= marginX || x >= width - marginX || y <= marginY || y >= height - marginY {
                    issues |= SetupIssue.tooClose.bit
                    break
                }
            }
        }
        // Orientation: shoulder width against torso length.
        if view != .sideOrFront,
            frame.has(Self.orientationMask),
            let ratio = Self.shoulderToTorsoRatio(frame)
        {
            if view == .side, ratio > rules.sideViewMaximumRatio {
                issues |= SetupIssue.turnSideways.bit
            } else if view == .front, ratio < rules.frontViewMinimumRatio {
                issues |= SetupIssue.faceCamera.bit
            }
        }
        if let mean = frame.meanConfidence(in: requiredMask), mean < rules.minimumMeanConfidence {
            issues |= SetupIssue.lowConfidence.bit
        }
        return issues
    }

    private static let orientationMask = [Joint.neck, .root, .leftShoulder, .rightShoulder].mask

    private static func shoulderToTorsoRatio(_ frame: PoseFrame) -> Double? {
        let torso = distance(frame[Joint.neck.index], frame[Joint.root.index])
        guard torso > 0 else { return nil }
        let ratio = distance(frame[Joint.leftShoulder.index], frame[Joint.rightShoulder.index]) / torso
        return ratio.isFinite ? ratio : nil
    }

    private static func distance(_ a: CGPoint, _ b: CGPoint) -> Double {
        let dx = Double(b.x - a.x)
        let dy = Double(b.y - a.y)
        return (dx * dx + dy * dy).squareRoot()
    }
}

extension SetupIssue {
    /// This issue's bit in a mask (its position in ``allCases``).
    var bit: UInt32 {
        switch self {
        case .tooFar: 1 << 0
        case .tooClose: 1 << 1
        case .turnSideways: 1 << 2
        case .faceCamera: 1 << 3
        case .lowConfidence: 1 << 4
        }
    }

    /// The issues whose bits are set in `mask`.
    static func set(from mask: UInt32) -> Set<SetupIssue> {
        Set(allCases.filter { mask & $0.bit != 0 })
    }
}
