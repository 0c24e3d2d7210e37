public import Foundation

/// Reads any recording the project knows, choosing the reader from what `url` points at.
///
/// - a folder: OpenPose per-frame JSON (``OpenPoseRecording``);
/// - a single `*_keypoints.json` file: one OpenPose frame at time 0;
/// - any other file: JSON Lines (``JSONLinesRecording``).
///
/// ```swift
/// let poses = try Recording.load(URL(fileURLWithPath: path))
/// ```
public enum Recording {
    /// Reads the poses of a recording file or OpenPose folder.
    /// - Parameters:
    ///   - url: A `.jsonl` file, an OpenPose folder, or one `*_keypoints.json` file.
    ///   - openPose: How to read OpenPose input (ignored for JSON Lines).
    /// - Throws: ``RecordingError`` naming the file (and line) that is missing or malformed.
    public static func load(
        _ url: URL, openPose: OpenPoseRecording.Options = OpenPoseRecording.Options()
    ) throws(RecordingError) -> [Pose] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw RecordingError(.fileNotFound, file: url.path, detail: "no such file or folder")
        }
        if isDirectory.boolValue {
            return try OpenPoseRecording.load(folder: url, options: openPose)
        }
        if url.lastPathComponent.hasSuffix("_keypoints.json") {
            let data = try RecordingFiles.read(url)
            do {
                return [try OpenPoseRecording.decodeFrame(data, timestamp: 0, options: openPose)]
            } catch {
                throw error.located(file: url.path)
            }
        }
        return try JSONLinesRecording.load(contentsOf: url)
    }
}
