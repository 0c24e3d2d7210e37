import Foundation

/// One pose copied into flat storage indexed by ``Joint/index``: the analysis reads joints by
/// index instead of hashing into the pose's dictionaries several dozen times per pose.
///
/// The storage is allocated once and reused for every pose (no heap allocation per pose).
struct PoseFrame: Sendable {
    /// Points by joint index; meaningful only where ``present`` has the joint's bit.
    private(set) var points: [CGPoint]
    /// Confidences by joint index, clamped to 0...1; meaningful only where ``confident`` has the
    /// joint's bit.
    private(set) var confidences: [Double]
    /// Bit `i` set: joint `i` is visible.
    private(set) var present: UInt32 = 0
    /// Bit `i` set: joint `i` is visible and has a confidence figure.
    private(set) var confident: UInt32 = 0
    /// The usable image size, or `nil` when unknown or not positive.
    private(set) var imageWidth: Double?
    private(set) var imageHeight: Double?

    init() {
        points = Array(repeating: .zero, count: Joint.allCases.count)
        confidences = Array(repeating: 0, count: Joint.allCases.count)
    }

    /// The coordinate beyond which a point is absurd whatever the image size.
    static let absoluteCoordinateLimit: Double = 1e6
    /// Beyond this many image sizes a point is absurd.
    static let imageSizeLimitFactor: Double = 10
    /// Beyond this many seconds (about 317 years) a timestamp is absurd: it is no clock's
    /// seconds (seconds since boot, 1970 or 2001 are far below; milliseconds or nanoseconds since
    /// 1970 are above), and a double there resolves time only to about 2 µs.
    static let timestampLimit: Double = 1e10

    /// Copies `pose` in, checking it: returns the reason to drop it, or `nil` when it is sound.
    ///
    /// The frame's content is unspecified after a rejected pose; it is only read after a load
    /// that returned `nil`. Checks do not depend on the dictionaries' iteration order.
    mutating func load(_ pose: Pose) -> PoseRejections.Reason? {
        guard pose.timestamp.isFinite else { return .nonFinite }
        guard abs(pose.timestamp) <= Self.timestampLimit else { return .absurdTimestamp }
        var limitX = Self.absoluteCoordinateLimit
        var limitY = Self.absoluteCoordinateLimit
        imageWidth = nil
        imageHeight = nil
        if let size = pose.imageSize {
            let width = Double(size.width)
            let height = Double(size.height)
            guard width.isFinite, height.isFinite else { return .nonFinite }
            if width > 0, height > 0 {
                imageWidth = width
                imageHeight = height
                limitX = min(limitX, width * Self.imageSizeLimitFactor)
                limitY = min(limitY, height * Self.imageSizeLimitFactor)
            }
        }
        // One pass over each dictionary, writing through buffer pointers (one uniqueness
        // check per pose instead of one per joint), with the loop state in locals.
        let (pointsNonFinite, absurd, present) = points.withUnsafeMutableBufferPointer { buffer in
            var nonFinite = false
            var absurd = false
            var present: UInt32 = 0
            for (joint, point) in pose.points {
                let x = Double(point.x)
                let y = Double(point.y)
                guard x.isFinite, y.isFinite else {
                    nonFinite = true
                    continue
                }
                absurd = absurd || abs(x) > limitX || abs(y) > limitY
                let index = joint.index
                buffer[index] = point
                present |= 1 << UInt32(index)
            }
            return (nonFinite, absurd, present)
        }
        let (confidencesNonFinite, confident) = confidences.withUnsafeMutableBufferPointer { buffer in
            var nonFinite = false
            var confident: UInt32 = 0
            for (joint, value) in pose.confidence {
                guard value.isFinite else {
                    nonFinite = true
                    continue
                }
                let index = joint.index
                // Confidence is 0...1: a detector's figure outside it counts as the nearest bound.
                buffer[index] = min(max(value, 0), 1)
                confident |= 1 << UInt32(index)
            }
            return (nonFinite, confident)
        }
        let nonFinite = pointsNonFinite || confidencesNonFinite
        if nonFinite { return .nonFinite }
        if absurd { return .absurdCoordinates }
        self.present = present
        self.confident = confident & present
        return nil
    }

    /// Whether every joint of `mask` is visible.
    @inline(__always)
    func has(_ mask: UInt32) -> Bool { present & mask == mask }

    /// The point of the joint at `index` (only meaningful when it is present).
    @inline(__always)
    subscript(index: Int) -> CGPoint { points[index] }

    /// The number of visible points.
    var count: Int { present.nonzeroBitCount }

    /// The vertical span of the visible points (largest y minus smallest), 0 without points.
    func verticalSpan() -> Double {
        var bits = present
        guard bits != 0 else { return 0 }
        var low = Double.infinity
        var high = -Double.infinity
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            let y = Double(points[index].y)
            low = min(low, y)
            high = max(high, y)
        }
        return high - low
    }

    /// The lowest confidence among the visible joints of `mask`, or `nil` when none of them
    /// has a confidence figure (as ``Pose/confidence(of:)``).
    func lowestConfidence(in mask: UInt32) -> Double? {
        var bits = mask & confident
        var lowest: Double?
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            let value = confidences[index]
            lowest = min(lowest ?? value, value)
        }
        return lowest
    }

    /// The mean confidence among the visible joints of `mask`, summed in joint order, or `nil`
    /// when none of them has a confidence figure.
    func meanConfidence(in mask: UInt32) -> Double? {
        var bits = mask & confident
        guard bits != 0 else { return nil }
        let count = bits.nonzeroBitCount
        var sum = 0.0
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            sum += confidences[index]
        }
        return sum / Double(count)
    }
}

extension Joint {
    /// This joint's bit in a joint mask (bit ``index``).
    var bit: UInt32 { 1 << UInt32(index) }
}

extension Sequence<Joint> {
    /// The joint mask with the bits of these joints.
    var mask: UInt32 { reduce(0) { $0 | $1.bit } }
}
