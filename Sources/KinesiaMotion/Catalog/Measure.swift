public import Foundation

/// A joint angle or segment angle the catalog measures, in degrees (image pixels, y down).
///
/// Definitions follow `CATALOG.md`: `angle(u, v)` is the unsigned angle between two vectors
/// (0...180), `down = (0, 1)`, `up = (0, -1)`, `trunkDown = root - neck`.
public enum Measure: String, CaseIterable, Sendable, Hashable, Codable {
    /// `angle(trunkDown, elbow - shoulder)`: 0 arm by the side, 90 horizontal, 180 overhead.
    case shoulderElevation
    /// 180 - interior angle at the elbow (shoulder, elbow, wrist): 0 straight.
    case elbowFlexion
    /// 180 - interior angle at the knee (hip, knee, ankle): 0 straight.
    case kneeFlexion
    /// `angle(trunkDown, knee - hip)`: 0 standing (standing knee raise, sagittal view).
    case hipFlexion
    /// `angle(trunkDown, knee - hip)`: 0 standing (leg out to the side, frontal view).
    case hipAbduction
    /// Interior angle at the knee - 90: 0 with the shin hanging, 90 straight (seated).
    case seatedKneeExtension
    /// `angle(up, knee - ankle)`: 0 vertical shin (knee-to-wall lunge).
    case tibiaInclination
    /// `angle(up, neck - root)`.
    case trunkLean
    /// Angle of the shoulder-to-shoulder line from horizontal, 0...90.
    case shoulderTilt
    /// Angle of the hip-to-hip line from horizontal, 0...90.
    case hipTilt
    /// `angle(down, elbow - shoulder)`; a form rule uses its change since the rep started.
    case upperArmDrift
    /// `angle(down, knee - hip)`; a form rule uses its change since the rep started.
    case thighDrift

    /// Whether form rules compare the change of this measure since the rep started
    /// rather than its value.
    public var isRelativeToRepStart: Bool {
        self == .upperArmDrift || self == .thighDrift
    }

    /// The joints the measure needs on `side`, in ``Joint`` order.
    public func joints(side: BodySide) -> [Joint] {
        let joints: [Joint]
        switch self {
        case .shoulderElevation:
            joints = [.neck, .root, .shoulder(side), .elbow(side)]
        case .elbowFlexion:
            joints = [.shoulder(side), .elbow(side), .wrist(side)]
        case .kneeFlexion, .seatedKneeExtension:
            joints = [.hip(side), .knee(side), .ankle(side)]
        case .hipFlexion, .hipAbduction:
            joints = [.neck, .root, .hip(side), .knee(side)]
        case .tibiaInclination:
            joints = [.knee(side), .ankle(side)]
        case .trunkLean:
            joints = [.neck, .root]
        case .shoulderTilt:
            joints = [.leftShoulder, .rightShoulder]
        case .hipTilt:
            joints = [.leftHip, .rightHip]
        case .upperArmDrift:
            joints = [.shoulder(side), .elbow(side)]
        case .thighDrift:
            joints = [.hip(side), .knee(side)]
        }
        return joints.sorted { $0.index < $1.index }
    }

    /// The measure's value in `pose` for `side`, in degrees, or `nil` when a joint it needs is
    /// missing or two of its points coincide.
    @inlinable
    public func value(in pose: Pose, side: BodySide) -> Double? {
        switch self {
        case .shoulderElevation:
            guard let neck = pose[.neck], let root = pose[.root],
                let shoulder = pose[.shoulder(side)], let elbow = pose[.elbow(side)]
            else { return nil }
            return Geometry.angle(
                Geometry.vector(from: neck, to: root), Geometry.vector(from: shoulder, to: elbow))
        case .elbowFlexion:
            guard let shoulder = pose[.shoulder(side)], let elbow = pose[.elbow(side)],
                let wrist = pose[.wrist(side)]
            else { return nil }
            return Geometry.interiorAngle(shoulder, elbow, wrist).map { 180 - $0 }
        case .kneeFlexion:
            guard let hip = pose[.hip(side)], let knee = pose[.knee(side)], let ankle = pose[.ankle(side)]
            else { return nil }
            return Geometry.interiorAngle(hip, knee, ankle).map { 180 - $0 }
        case .seatedKneeExtension:
            guard let hip = pose[.hip(side)], let knee = pose[.knee(side)], let ankle = pose[.ankle(side)]
            else { return nil }
            return Geometry.interiorAngle(hip, knee, ankle).map { $0 - 90 }
        case .hipFlexion, .hipAbduction:
            guard let neck = pose[.neck], let root = pose[.root], let hip = pose[.hip(side)],
                let knee = pose[.knee(side)]
            else { return nil }
            return Geometry.angle(Geometry.vector(from: neck, to: root), Geometry.vector(from: hip, to: knee))
        case .tibiaInclination:
            guard let knee = pose[.knee(side)], let ankle = pose[.ankle(side)] else { return nil }
            return Geometry.angle(Geometry.up, Geometry.vector(from: ankle, to: knee))
        case .trunkLean:
            guard let neck = pose[.neck], let root = pose[.root] else { return nil }
            return Geometry.angle(Geometry.up, Geometry.vector(from: root, to: neck))
        case .shoulderTilt:
            guard let left = pose[.leftShoulder], let right = pose[.rightShoulder] else { return nil }
            return Geometry.tilt(left, right)
        case .hipTilt:
            guard let left = pose[.leftHip], let right = pose[.rightHip] else { return nil }
            return Geometry.tilt(left, right)
        case .upperArmDrift:
            guard let shoulder = pose[.shoulder(side)], let elbow = pose[.elbow(side)] else { return nil }
            return Geometry.angle(Geometry.down, Geometry.vector(from: shoulder, to: elbow))
        case .thighDrift:
            guard let hip = pose[.hip(side)], let knee = pose[.knee(side)] else { return nil }
            return Geometry.angle(Geometry.down, Geometry.vector(from: hip, to: knee))
        }
    }
}

/// Plane geometry on image points, in degrees.
public enum Geometry {
    /// `(0, 1)`: down in image coordinates.
    public static let down = CGPoint(x: 0, y: 1)
    /// `(0, -1)`: up in image coordinates.
    public static let up = CGPoint(x: 0, y: -1)

    /// `b - a`.
    @inlinable
    public static func vector(from a: CGPoint, to b: CGPoint) -> CGPoint {
        CGPoint(x: b.x - a.x, y: b.y - a.y)
    }

    /// The unsigned angle between `u` and `v`, 0...180 degrees, or `nil` when either is zero
    /// or not finite.
    @inlinable
    public static func angle(_ u: CGPoint, _ v: CGPoint) -> Double? {
        let ux = Double(u.x), uy = Double(u.y), vx = Double(v.x), vy = Double(v.y)
        let cross = ux * vy - uy * vx
        let dot = ux * vx + uy * vy
        guard (ux != 0 || uy != 0), (vx != 0 || vy != 0) else { return nil }
        let radians = atan2(abs(cross), dot)
        guard radians.isFinite else { return nil }
        return radians * 180 / .pi
    }

    /// The interior angle at `b` of `a`-`b`-`c`, 0...180 degrees.
    @inlinable
    public static func interiorAngle(_ a: CGPoint, _ b: CGPoint, _ c: CGPoint) -> Double? {
        angle(vector(from: b, to: a), vector(from: b, to: c))
    }

    /// The angle of the line through `a` and `b` from horizontal, 0...90 degrees.
    @inlinable
    public static func tilt(_ a: CGPoint, _ b: CGPoint) -> Double? {
        let dx = abs(Double(b.x - a.x)), dy = abs(Double(b.y - a.y))
        guard dx != 0 || dy != 0 else { return nil }
        let degrees = atan2(dy, dx) * 180 / .pi
        return degrees.isFinite ? degrees : nil
    }
}
