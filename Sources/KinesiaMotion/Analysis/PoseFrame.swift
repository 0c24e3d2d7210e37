import Foundation

/// One checked pose in flat storage indexed by ``Joint/index``: the analysis reads joints by
/// index instead of hashing into the pose's dictionaries several dozen times per pose.
///
/// The storage is allocated once and reused for every pose (no heap allocation per pose).
/// Every pose, whether it came as a ``Pose`` or as a ``FlatPose``, goes through
/// ``load(_:)-(FlatPose)``: one set of checks.
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
    mutating func load(_ pose: Pose) -> PoseRejections.Reason? {
        load(FlatPose(pose))
    }

    /// Copies `flat` in, checking it: returns the reason to drop it, or `nil` when it is sound.
    ///
    /// The frame's content is unspecified after a rejected pose; it is only read after a load
    /// that returned `nil`. Checks do not depend on the order of joints.
    mutating func load(_ flat: FlatPose) -> PoseRejections.Reason? {
        guard flat.timestamp.isFinite else { return .nonFinite }
        guard abs(flat.timestamp) <= Self.timestampLimit else { return .absurdTimestamp }
        var limitX = Self.absoluteCoordinateLimit
        var limitY = Self.absoluteCoordinateLimit
        var usableWidth: Double?
        var usableHeight: Double?
        if let size = flat.imageSize {
            let width = Double(size.width)
            let height = Double(size.height)
            guard width.isFinite, height.isFinite else { return .nonFinite }
            if width > 0, height > 0 {
                usableWidth = width
                usableHeight = height
                limitX = min(limitX, width * Self.imageSizeLimitFactor)
                limitY = min(limitY, height * Self.imageSizeLimitFactor)
            }
        }
        // Spans read the flat pose's storage in place (no copy of its arrays).
        let xs = flat.xs.span
        let ys = flat.ys.span
        let values = flat.confidences.span
        var nonFinite = false
        var absurd = false
        var bits = flat.pointMask
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            let x = xs[index]
            let y = ys[index]
            guard x.isFinite, y.isFinite else {
                nonFinite = true
                continue
            }
            absurd = absurd || abs(x) > limitX || abs(y) > limitY
        }
        bits = flat.confidenceMask
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            if !values[index].isFinite { nonFinite = true }
        }
        if nonFinite { return .nonFinite }
        if absurd { return .absurdCoordinates }
        imageWidth = usableWidth
        imageHeight = usableHeight
        present = flat.pointMask
        confident = flat.confidenceMask & flat.pointMask
        // Plain loops over the masks (a closure here would copy the flat pose).
        bits = flat.pointMask
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            points[index] = CGPoint(x: xs[index], y: ys[index])
        }
        bits = confident
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            // Confidence is 0...1: a detector's figure outside it counts as the nearest bound.
            confidences[index] = min(max(values[index], 0), 1)
        }
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
