public import Foundation

/// One frame of body points: the input of every analysis.
///
/// The pose contract (the engine trusts it; a custom ``PoseProvider`` must keep it):
/// 1. Pixels of the image, y down, origin top-left. Never normalised, never Vision's bottom-left.
/// 2. Anatomical sides: ``Joint/leftElbow`` is the patient's real left elbow. With a front
///    camera the adapter swaps left and right before building the pose.
/// 3. Only reliable points: a joint that is absent means "I don't see it"; the engine does not
///    measure it, does not penalise it, and reports it missing.
/// 4. ``confidence`` is optional: leave it empty when the detector has none, and confidence
///    figures come out `nil`.
///
/// Send empty poses too: an empty pose tells the session that the patient left the frame.
///
/// ```swift
/// if let elbow = pose[.rightElbow] { print(elbow) }   // CGPoint in pixels
/// pose.confidence(of: [.rightShoulder, .rightElbow, .rightWrist])
/// ```
public struct Pose: Sendable, Equatable {
    /// The visible joints, in image pixels with y down.
    public var points: [Joint: CGPoint]
    /// When the frame was captured, in seconds. The analysis takes its time only from here.
    public var timestamp: TimeInterval
    /// The size of the image the points refer to, when known.
    public var imageSize: CGSize?
    /// The detector's confidence per joint, 0...1; empty when the detector gives none. The
    /// analysis takes a figure outside 0...1 as the nearest bound.
    public var confidence: [Joint: Double]

    /// Creates a pose.
    /// - Parameters:
    ///   - points: The visible joints, in pixels with y down.
    ///   - timestamp: Capture time in seconds.
    ///   - imageSize: The image size, when known.
    ///   - confidence: Confidence per joint, or empty.
    public init(
        points: [Joint: CGPoint] = [:], timestamp: TimeInterval, imageSize: CGSize? = nil,
        confidence: [Joint: Double] = [:]
    ) {
        self.points = points
        self.timestamp = timestamp
        self.imageSize = imageSize
        self.confidence = confidence
    }

    /// The point of `joint`, or `nil` when it is not visible.
    @inlinable
    public subscript(joint: Joint) -> CGPoint? { points[joint] }

    /// The lowest confidence among the visible joints of `joints`, or `nil` when none of them
    /// is visible or the pose has no confidence figures.
    public func confidence(of joints: some Sequence<Joint>) -> Double? {
        var lowest: Double?
        for joint in joints where points[joint] != nil {
            guard let value = confidence[joint] else { continue }
            lowest = min(lowest ?? value, value)
        }
        return lowest
    }

    /// Whether nobody is in view (no points at all).
    public var isEmpty: Bool { points.isEmpty }
}
