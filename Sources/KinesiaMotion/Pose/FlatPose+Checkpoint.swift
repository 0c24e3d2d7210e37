import Foundation

extension FlatPose {
    /// A pose as a checkpoint holds it (the held pose of ``MotionAnalyzer``): the joints that
    /// are there, in index order; the storage of absent joints is not kept (no analysis reads
    /// it).
    struct Checkpoint: Codable, Hashable, Sendable {
        var timestamp: Double
        var imageWidth: Double?
        var imageHeight: Double?
        var pointMask: UInt32
        var confidenceMask: UInt32
        /// The x and y of each joint of ``pointMask``, in index order.
        var xs: [Double]
        var ys: [Double]
        /// The confidence of each joint of ``confidenceMask``, in index order.
        var confidences: [Double]
    }

    /// The pose, as ``init(restoring:)`` takes it back.
    var checkpoint: Checkpoint {
        var xs: [Double] = []
        var ys: [Double] = []
        var values: [Double] = []
        for index in 0..<Self.jointCount {
            let bit = UInt32(1) << UInt32(index)
            if pointMask & bit != 0 {
                xs.append(self.xs[index])
                ys.append(self.ys[index])
            }
            if confidenceMask & bit != 0 { values.append(confidences[index]) }
        }
        return Checkpoint(
            timestamp: timestamp, imageWidth: imageSize.map { Double($0.width) },
            imageHeight: imageSize.map { Double($0.height) }, pointMask: pointMask,
            confidenceMask: confidenceMask, xs: xs, ys: ys, confidences: values)
    }

    /// The pose of `checkpoint`.
    /// - Throws: ``CheckpointError/Kind/inconsistent`` when a mask names no joint, the figures
    ///   do not match the masks, or the pose would be dropped as bad input.
    init(restoring checkpoint: Checkpoint) throws(CheckpointError) {
        let all = UInt32(1) << UInt32(Self.jointCount) - 1
        guard checkpoint.pointMask & ~all == 0, checkpoint.confidenceMask & ~all == 0,
            checkpoint.xs.count == checkpoint.pointMask.nonzeroBitCount,
            checkpoint.ys.count == checkpoint.xs.count,
            checkpoint.confidences.count == checkpoint.confidenceMask.nonzeroBitCount,
            (checkpoint.imageWidth == nil) == (checkpoint.imageHeight == nil)
        else {
            throw CheckpointError(.inconsistent, detail: "a held pose whose joints do not match its masks")
        }
        var size: CGSize?
        if let width = checkpoint.imageWidth, let height = checkpoint.imageHeight {
            size = CGSize(width: width, height: height)
        }
        self.init(timestamp: checkpoint.timestamp, imageSize: size)
        var next = 0
        for index in 0..<Self.jointCount where checkpoint.pointMask & (1 << UInt32(index)) != 0 {
            guard let joint = Joint(index: index) else { continue }
            setPoint(CGPoint(x: checkpoint.xs[next], y: checkpoint.ys[next]), for: joint)
            next += 1
        }
        next = 0
        for index in 0..<Self.jointCount where checkpoint.confidenceMask & (1 << UInt32(index)) != 0 {
            guard let joint = Joint(index: index) else { continue }
            setConfidence(checkpoint.confidences[next], for: joint)
            next += 1
        }
        // A held pose passed the pose checks when it came: one that does not came from elsewhere.
        var frame = PoseFrame()
        if let reason = frame.load(self) {
            throw CheckpointError(.inconsistent, detail: "a held pose that is bad input (\(reason.rawValue))")
        }
    }
}
