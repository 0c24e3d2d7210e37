import Foundation
import KinesiaMotion
import Testing

/// The catalog's angles against Sports2D's own computation on the same keypoints
/// (`data/recordings/*.sports2d_angles.csv`, Sports2D 0.8.34 `compute_angles_for_person`, no
/// filtering). Sports2D's joint angles are signed; their absolute values are the catalog's.
struct Sports2DAgreementTests {
    /// The recordings that have a Sports2D table.
    static let recordings = ["p2s_balance_cam01_openpose25b", "s2d_demo_walk_mediapipe"]

    /// Each catalog measure with its Sports2D column (before the side: "left knee").
    static let measures: [(measure: Measure, column: String)] = [
        (.kneeFlexion, "knee"), (.elbowFlexion, "elbow"), (.hipFlexion, "hip"),
        (.shoulderElevation, "shoulder"),
    ]

    /// The tolerance of the issue: 0.5 degrees on every frame.
    static let tolerance = 0.5

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

    static func compare(_ recording: String, _ measure: Measure, _ column: String, _ side: BodySide) throws
        -> Comparison
    {
        let poses = try JSONLinesRecording.load(contentsOf: RecordingFixtures.recording("\(recording).jsonl"))
        let (columns, rows) = try table(recording)
        let time = try #require(columns.firstIndex(of: "time"))
        let angle = try #require(columns.firstIndex(of: "\(side.rawValue) \(column)"))
        #expect(rows.count == poses.count)
        var result = Comparison()
        for (pose, row) in zip(poses, rows) {
            #expect(abs((row[time] ?? -1) - pose.timestamp) < 1e-6, "rows and poses must be the same frames")
            let theirs = row[angle], ours = measure.value(in: pose, side: side)
            if (theirs == nil) != (ours == nil) { result.measuredByOneOnly += 1 }
            guard let theirs, let ours else { continue }
            result.frames += 1
            let difference = abs(ours - abs(theirs))
            if difference > result.worst {
                result.worst = difference
                result.worstTime = pose.timestamp
            }
        }
        return result
    }

    @Test(arguments: recordings, measures.indices)
    func everyMeasureAgreesWithSports2DOnEveryFrame(_ recording: String, _ index: Int) throws {
        let (measure, column) = Self.measures[index]
        for side in BodySide.allCases {
            let comparison = try Self.compare(recording, measure, column, side)
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
                    + String(format: "%.4f", comparison.worst) + " deg over \(comparison.frames) frames")
        }
    }
}
