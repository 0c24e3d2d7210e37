public import Foundation

/// A ``Pose`` in flat, fixed-size storage indexed by ``Joint/index``: no dictionary, no heap.
///
/// This is the fast form of a pose: a decoder fills it once and any number of analyzers read
/// it through ``MotionAnalyzer/process(_:)-(FlatPose)``, with exactly the checks and results
/// of ``MotionAnalyzer/process(_:)-(Pose)`` (which converts its pose to this form first).
/// Values are kept as given, NaN included: the analyzer judges them.
///
/// ```swift
/// var flat = FlatPose(timestamp: 1.5, imageSize: CGSize(width: 1280, height: 720))
/// flat.setPoint(CGPoint(x: 640, y: 200), for: .leftShoulder)
/// flat.setConfidence(0.9, for: .leftShoulder)
/// let events = analyzer.process(flat)
/// ```
public struct FlatPose: Sendable {
    /// The number of joints (``Joint/allCases``), the size of the storage.
    public static let jointCount = 19

    /// When the frame was captured, in seconds (as ``Pose/timestamp``).
    public var timestamp: Double
    /// The size of the image the points refer to, when known (as ``Pose/imageSize``).
    public var imageSize: CGSize?
    /// Bit `i` set: the joint of index `i` has a point.
    public private(set) var pointMask: UInt32 = 0
    /// Bit `i` set: the joint of index `i` has a confidence figure (with or without a point).
    public private(set) var confidenceMask: UInt32 = 0

    var xs = InlineArray<19, Double>(repeating: 0)
    var ys = InlineArray<19, Double>(repeating: 0)
    var confidences = InlineArray<19, Double>(repeating: 0)

    /// Creates a pose without points or confidence figures.
    /// - Parameters:
    ///   - timestamp: Capture time in seconds.
    ///   - imageSize: The image size, when known.
    public init(timestamp: Double = 0, imageSize: CGSize? = nil) {
        self.timestamp = timestamp
        self.imageSize = imageSize
    }

    /// Copies `pose` into flat form.
    public init(_ pose: Pose) {
        self.init()
        load(pose)
    }

    /// Replaces the content with `pose`'s, reusing this storage.
    public mutating func load(_ pose: Pose) {
        timestamp = pose.timestamp
        imageSize = pose.imageSize
        var points: UInt32 = 0
        for (joint, point) in pose.points {
            let index = joint.index
            xs[index] = Double(point.x)
            ys[index] = Double(point.y)
            points |= 1 << UInt32(index)
        }
        var confident: UInt32 = 0
        for (joint, value) in pose.confidence {
            let index = joint.index
            confidences[index] = value
            confident |= 1 << UInt32(index)
        }
        pointMask = points
        confidenceMask = confident
    }

    /// Removes every point and confidence figure (timestamp and image size stay).
    public mutating func removeAll() {
        pointMask = 0
        confidenceMask = 0
    }

    /// Sets the point of `joint` (`nil` removes it).
    public mutating func setPoint(_ point: CGPoint?, for joint: Joint) {
        let bit = UInt32(1) << UInt32(joint.index)
        guard let point else {
            pointMask &= ~bit
            return
        }
        xs[joint.index] = Double(point.x)
        ys[joint.index] = Double(point.y)
        pointMask |= bit
    }

    /// Sets the confidence figure of `joint` (`nil` removes it).
    public mutating func setConfidence(_ value: Double?, for joint: Joint) {
        let bit = UInt32(1) << UInt32(joint.index)
        guard let value else {
            confidenceMask &= ~bit
            return
        }
        confidences[joint.index] = value
        confidenceMask |= bit
    }

    /// The point of `joint`, or `nil` when it is not visible.
    public subscript(joint: Joint) -> CGPoint? {
        guard pointMask & (1 << UInt32(joint.index)) != 0 else { return nil }
        return CGPoint(x: xs[joint.index], y: ys[joint.index])
    }

    /// The confidence figure of `joint` as given, or `nil` when there is none.
    public func confidence(of joint: Joint) -> Double? {
        guard confidenceMask & (1 << UInt32(joint.index)) != 0 else { return nil }
        return confidences[joint.index]
    }

    /// The same pose with dictionaries.
    public var pose: Pose {
        var points: [Joint: CGPoint] = [:]
        var confidence: [Joint: Double] = [:]
        if pointMask != 0 { points.reserveCapacity(pointMask.nonzeroBitCount) }
        if confidenceMask != 0 { confidence.reserveCapacity(confidenceMask.nonzeroBitCount) }
        let xs = self.xs.span
        let ys = self.ys.span
        let values = confidences.span
        var bits = pointMask
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            points[Self.joints[index]] = CGPoint(x: xs[index], y: ys[index])
        }
        bits = confidenceMask
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            confidence[Self.joints[index]] = values[index]
        }
        return Pose(points: points, timestamp: timestamp, imageSize: imageSize, confidence: confidence)
    }

    /// ``Joint/allCases`` computed once (the synthesized `allCases` builds a new array per call).
    private static let joints = Joint.allCases
}

extension FlatPose: Equatable {
    /// Whether both hold the same pose: the same timestamp, image size, joints and figures
    /// (storage of absent joints is ignored). NaN is unequal to itself, as in ``Pose``.
    public static func == (lhs: FlatPose, rhs: FlatPose) -> Bool {
        guard lhs.timestamp == rhs.timestamp, lhs.imageSize == rhs.imageSize,
            lhs.pointMask == rhs.pointMask, lhs.confidenceMask == rhs.confidenceMask
        else { return false }
        for index in 0..<jointCount {
            let bit = UInt32(1) << UInt32(index)
            if lhs.pointMask & bit != 0, lhs.xs[index] != rhs.xs[index] || lhs.ys[index] != rhs.ys[index] {
                return false
            }
            if lhs.confidenceMask & bit != 0, lhs.confidences[index] != rhs.confidences[index] {
                return false
            }
        }
        return true
    }
}
