public import Foundation

/// The portable part of `VisionPoseProvider`: turns the points of Vision's 2D body detector into
/// a ``Pose`` that keeps the pose contract.
///
/// Vision gives each joint a point normalised to 0...1 with the origin at the bottom-left of the
/// image, and a confidence. The converter:
/// - scales the point to pixels of the upright image of `imageSize`, with y down
///   (`x * width`, `(1 - y) * height`);
/// - with the front camera, swaps left and right on every paired joint (``Joint/mirrored``), so
///   that sides are the patient's anatomical sides; the coordinates are not changed (draw them
///   mirrored over a mirrored preview);
/// - drops points whose confidence is under ``minimumConfidence``, points with confidence 0
///   (Vision's "not found") and points that are not finite;
/// - gives an empty pose (with its timestamp and image size) when nobody is detected.
///
/// It is pure and runs everywhere, so it is tested on Linux; the iOS provider only feeds it.
///
/// ```swift
/// let converter = VisionPoseConverter(camera: .front, minimumConfidence: 0.3)
/// let pose = converter.pose(
///     from: [.leftShoulder: .init(x: 0.4, y: 0.7, confidence: 0.9)],
///     imageSize: CGSize(width: 480, height: 640), timestamp: 12.5)
/// ```
public struct VisionPoseConverter: Sendable, Hashable {
    /// One recognised point as Vision reports it.
    public struct NormalizedPoint: Sendable, Hashable {
        /// 0...1 from the left edge of the upright image.
        public var x: Double
        /// 0...1 from the **bottom** edge of the upright image.
        public var y: Double
        /// Vision's confidence, 0...1 (0: not found).
        public var confidence: Double

        /// Creates a point.
        public init(x: Double, y: Double, confidence: Double) {
            self.x = x
            self.y = y
            self.confidence = confidence
        }
    }

    /// Which camera the frames come from.
    public var camera: CameraPosition
    /// Points with a lower confidence are dropped.
    public var minimumConfidence: Double

    /// Creates a converter.
    /// - Parameters:
    ///   - camera: `.front` (the default, as for `VisionPoseProvider`) swaps left and right.
    ///   - minimumConfidence: Points under it are dropped (0.3 by default, as for
    ///     `VisionPoseProvider`).
    public init(camera: CameraPosition = .front, minimumConfidence: Double = 0.3) {
        self.camera = camera
        self.minimumConfidence = minimumConfidence
    }

    /// Builds the pose of one frame.
    /// - Parameters:
    ///   - observation: Vision's points by joint, or `nil` when nobody was detected.
    ///   - imageSize: The size of the upright image, in pixels.
    ///   - timestamp: The frame's capture time, in seconds.
    /// - Returns: A pose in pixels, y down, anatomical sides, only reliable points.
    public func pose(
        from observation: [Joint: NormalizedPoint]?, imageSize: CGSize, timestamp: TimeInterval
    ) -> Pose {
        var points: [Joint: CGPoint] = [:]
        var confidence: [Joint: Double] = [:]
        let width = Double(imageSize.width), height = Double(imageSize.height)
        for (joint, point) in observation ?? [:] {
            guard point.x.isFinite, point.y.isFinite, point.confidence.isFinite,
                point.confidence > 0, point.confidence >= minimumConfidence
            else { continue }
            let anatomical = camera == .front ? joint.mirrored : joint
            points[anatomical] = CGPoint(x: point.x * width, y: (1 - point.y) * height)
            confidence[anatomical] = min(point.confidence, 1)
        }
        return Pose(points: points, timestamp: timestamp, imageSize: imageSize, confidence: confidence)
    }
}
