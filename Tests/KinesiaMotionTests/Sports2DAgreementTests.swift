import Foundation
import KinesiaMotion
import Testing

/// The catalog's angles against Sports2D's own computation on the same keypoints
/// (`data/recordings/*.sports2d_angles.csv`, Sports2D 0.8.34 `compute_angles_for_person`, no
/// filtering), for every measure the CSVs allow, on every frame where both measure, at the
/// README's tolerance.
///
/// Conversions from Sports2D's conventions:
/// - Joint angles (knee, elbow, hip, shoulder) are signed; their absolute values are the
///   catalog's.
/// - Segment angles (`trunk`, `shank`) are the segment's direction θ from the horizontal with y
///   up, the x axis mirrored when the person faces left; the trunk points from the hip to the
///   neck, the shank from the knee to the ankle. Mirroring x keeps sin θ, so the trunk's angle
///   from vertical up (``Measure/trunkLean``: `angle(up, neck - root)`) is `acos(sin θ)`, and the
///   tibia inclination (``Measure/tibiaInclination``: `angle(up, knee - ankle)`, the shank
///   reversed) is `acos(-sin θ)`. Both have a derivative of ±1 in θ, so the CSV's rounding
///   carries over unchanged.
struct Sports2DAgreementTests {
    /// The recordings that have a Sports2D table.
    static let recordings = ["p2s_balance_cam01_openpose25b", "s2d_demo_walk_mediapipe"]

    /// How a Sports2D column becomes a catalog measure.
    enum Conversion: Sendable {
        /// A signed joint angle: its absolute value.
        case jointAngle
        /// A segment pointing up (hip to neck): `acos(sin θ)`.
        case segmentFromUp
        /// A segment pointing down (knee to ankle), measured reversed: `acos(-sin θ)`.
        case reversedSegmentFromUp

        func callAsFunction(_ theirs: Double) -> Double {
            let sine = sin(theirs * .pi / 180)
            switch self {
            case .jointAngle: return abs(theirs)
            case .segmentFromUp: return acos(min(max(sine, -1), 1)) * 180 / .pi
            case .reversedSegmentFromUp: return acos(min(max(-sine, -1), 1)) * 180 / .pi
            }
        }
    }

    /// Each catalog measure with its Sports2D column (`side` is replaced by "left" or "right";
    /// `trunk` has no side) and its conversion.
    static let measures: [(measure: Measure, column: String, conversion: Conversion)] = [
        (.kneeFlexion, "side knee", .jointAngle), (.elbowFlexion, "side elbow", .jointAngle),
        (.hipFlexion, "side hip", .jointAngle), (.shoulderElevation, "side shoulder", .jointAngle),
        (.trunkLean, "trunk", .segmentFromUp), (.tibiaInclination, "side shank", .reversedSegmentFromUp),
    ]

    /// The README's claim: 0.0005 degrees, the CSV's rounding to three decimals (plus what
    /// binary floating point adds to a decimal half-step).
    static let tolerance = 0.0005 + 1e-9

    /// The CSV: the header's columns and, per row, the values (`nil` where empty).
    static func table(_ name: String) throws -> (columns: [String], rows: [[Double?]]) {
        let text = try String(
            contentsOf: RecordingFixtures.recording("\(name).sports2d_angles.csv"), encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline).map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        let columns = lines.removeFirst().map(String.init)
        let rows = lines.map { $0.map { Double($0) } }
        return (columns, rows)
    }

    struct Comparison {
        var frames = 0
        /// Frames where only one side measured (a joint the other did not need, or a bug).
        var measuredByOneOnly = 0
        var worst = 0.0
        var worstTime = 0.0
    }

    static func compare(
        _ recording: String, _ measure: Measure, _ column: String, _ conversion: Conversion, _ side: BodySide
    ) throws -> Comparison {
        let poses = try JSONLinesRecording.load(contentsOf: RecordingFixtures.recording("\(recording).jsonl"))
        let (columns, rows) = try table(recording)
        let time = try #require(columns.firstIndex(of: "time"))
        let name = column.replacingOccurrences(of: "side", with: side.rawValue)
        let angle = try #require(columns.firstIndex(of: name), "no column \(name)")
        #expect(rows.count == poses.count)
        var result = Comparison()
        for (pose, row) in zip(poses, rows) {
            #expect(abs((row[time] ?? -1) - pose.timestamp) < 1e-6, "rows and poses must be the same frames")
            let theirs = row[angle], ours = measure.value(in: pose, side: side)
            if (theirs == nil) != (ours == nil) { result.measuredByOneOnly += 1 }
            guard let theirs, let ours else { continue }
            result.frames += 1
            let difference = abs(ours - conversion(theirs))
            if difference > result.worst {
                result.worst = difference
                result.worstTime = pose.timestamp
            }
        }
        return result
    }

    @Test(arguments: recordings, measures.indices)
    func everyMeasureAgreesWithSports2DOnEveryFrame(_ recording: String, _ index: Int) throws {
        let (measure, column, conversion) = Self.measures[index]
        for side in BodySide.allCases {
            let comparison = try Self.compare(recording, measure, column, conversion, side)
            // Every recording has the person in view for most frames: a comparison over a
            // handful of frames would prove nothing.
            #expect(
                comparison.frames >= 90, "\(recording) \(side) \(column): only \(comparison.frames) frames")
            #expect(comparison.measuredByOneOnly == 0, "\(recording) \(side) \(column): measured by one only")
            #expect(
                comparison.worst <= Self.tolerance,
                "\(recording) \(side) \(column): \(comparison.worst) degrees at t=\(comparison.worstTime)")
            print(
                "Sports2D agreement: \(recording) \(measure.rawValue) \(side.rawValue): worst "
                    + String(format: "%.6f", comparison.worst) + " deg over \(comparison.frames) frames")
        }
    }
}
