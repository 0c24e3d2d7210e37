import Foundation

/// A ``Measure`` bound to a side, with its joints resolved to indices once: computes the same
/// value as ``Measure/value(in:side:)`` from a ``PoseFrame`` (same formulas, same order of
/// floating-point operations, hence identical results).
struct MeasureKernel: Sendable {
    let measure: Measure
    /// The joints the measure needs, as a mask.
    let mask: UInt32
    /// The measure's joint indices, in ``Joint`` order.
    let indices: [Int]
    private let a: Int
    private let b: Int
    private let c: Int
    private let d: Int

    init(_ measure: Measure, side: BodySide) {
        self.measure = measure
        let joints = measure.joints(side: side)
        mask = joints.mask
        indices = joints.map(\.index)
        let order: [Joint]
        switch measure {
        case .shoulderElevation: order = [.neck, .root, .shoulder(side), .elbow(side)]
        case .elbowFlexion: order = [.shoulder(side), .elbow(side), .wrist(side)]
        case .kneeFlexion, .seatedKneeExtension: order = [.hip(side), .knee(side), .ankle(side)]
        case .hipFlexion, .hipAbduction: order = [.neck, .root, .hip(side), .knee(side)]
        case .tibiaInclination: order = [.knee(side), .ankle(side)]
        case .trunkLean: order = [.neck, .root]
        case .shoulderTilt: order = [.leftShoulder, .rightShoulder]
        case .hipTilt: order = [.leftHip, .rightHip]
        case .upperArmDrift: order = [.shoulder(side), .elbow(side)]
        case .thighDrift: order = [.hip(side), .knee(side)]
        }
        let slots = order.map(\.index) + Array(repeating: 0, count: 4 - order.count)
        a = slots[0]
        b = slots[1]
        c = slots[2]
        d = slots[3]
    }

    /// The measure's value in `frame`, or `nil` when a joint is missing or points coincide.
    func value(in frame: PoseFrame) -> Double? {
        guard frame.has(mask) else { return nil }
        switch measure {
        case .shoulderElevation, .hipFlexion, .hipAbduction:
            return Geometry.angle(
                Geometry.vector(from: frame[a], to: frame[b]), Geometry.vector(from: frame[c], to: frame[d]))
        case .elbowFlexion, .kneeFlexion:
            return Geometry.interiorAngle(frame[a], frame[b], frame[c]).map { 180 - $0 }
        case .seatedKneeExtension:
            return Geometry.interiorAngle(frame[a], frame[b], frame[c]).map { $0 - 90 }
        case .tibiaInclination:
            return Geometry.angle(Geometry.up, Geometry.vector(from: frame[b], to: frame[a]))
        case .trunkLean:
            return Geometry.angle(Geometry.up, Geometry.vector(from: frame[b], to: frame[a]))
        case .shoulderTilt, .hipTilt:
            return Geometry.tilt(frame[a], frame[b])
        case .upperArmDrift, .thighDrift:
            return Geometry.angle(Geometry.down, Geometry.vector(from: frame[a], to: frame[b]))
        }
    }
}
