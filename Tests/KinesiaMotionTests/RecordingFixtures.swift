import Foundation
import KinesiaTestSupport

/// Paths of the repository's data files, found from this source file (never from ../shared).
enum RecordingFixtures {
    /// `data/recordings/<name>`.
    static func recording(_ name: String) -> URL {
        PackagePaths.url("data/recordings").appendingPathComponent(name)
    }

    /// `data/openpose/<name>`.
    static func openPose(_ name: String) -> URL {
        PackagePaths.url("data/openpose").appendingPathComponent(name)
    }

    /// Every JSON Lines recording of `data/recordings`.
    static let allRecordings = [
        "p2s_balance_cam01_openpose25b.jsonl", "p2s_balance_cam03_openpose25b.jsonl",
        "p2s_balance_cam01_mediapipe.jsonl", "s2d_demo_walk_mediapipe.jsonl",
    ]

    /// A fresh temporary folder, removed by the caller.
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kinesia-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
