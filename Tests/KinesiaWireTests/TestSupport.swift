import Foundation
import KinesiaMotion
import KinesiaTestSupport
import KinesiaWire

/// The directory of the committed wire fixtures.
let fixturesDirectory = PackagePaths.url("Tests/KinesiaWireTests/Fixtures")

/// Every pose of a real recording in `data/recordings` (JSON Lines: t, w, h, points, confidence).
func recordedPoses(_ name: String) throws -> [Pose] {
    let url = PackagePaths.url("data/recordings/\(name)")
    let text = try String(contentsOf: url, encoding: .utf8)
    return try text.split(separator: "\n").map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        var points: [Joint: CGPoint] = [:]
        for (name, value) in object["points"] as? [String: [Double]] ?? [:] {
            points[Joint(rawValue: name)!] = CGPoint(x: value[0], y: value[1])
        }
        var confidence: [Joint: Double] = [:]
        for (name, value) in object["confidence"] as? [String: Double] ?? [:] {
            confidence[Joint(rawValue: name)!] = value
        }
        let size = (object["w"] as? Double).map { CGSize(width: $0, height: object["h"] as! Double) }
        return Pose(
            points: points, timestamp: object["t"] as! Double, imageSize: size, confidence: confidence)
    }
}

/// A header for tests.
func header(_ kind: PayloadKind, sequence: UInt64 = 7) -> WireHeader {
    WireHeader(
        kind: kind, streamID: StreamID(0x0123_4567_89AB_CDEF), sequence: sequence,
        sentAt: 1_764_489_600_000_000_000)
}

/// A pose with every joint, an image size and a confidence per joint, with awkward numbers.
func fullPose() -> Pose {
    var points: [Joint: CGPoint] = [:]
    var confidence: [Joint: Double] = [:]
    for joint in Joint.allCases {
        points[joint] = CGPoint(x: 100.1 + Double(joint.index) / 3, y: -0.0 + 1e-300 * Double(joint.index))
        confidence[joint] = 0.1 * Double(joint.index) / 1.9
    }
    return Pose(
        points: points, timestamp: 12.345_678_901_234_567, imageSize: CGSize(width: 1920, height: 1080),
        confidence: confidence)
}

extension Array where Element == UInt8 {
    /// Lowercase hex, two digits a byte.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
