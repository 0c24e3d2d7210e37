public import Foundation

/// A JSON Lines recording: one pose a line, in the format of ``PoseJSONLine``.
///
/// Blank lines are skipped; every other line must be a valid pose, else loading fails with a
/// ``RecordingError`` naming the file and the line. The whole file is read when the recording
/// is created, so ``poses()`` cannot fail.
///
/// ```swift
/// let recording = try JSONLinesRecording(contentsOf: URL(fileURLWithPath: "walk.jsonl"))
/// for await pose in recording.poses() { session.process(pose) }
/// ```
public struct JSONLinesRecording: PoseProvider {
    /// Every pose of the recording, in file order.
    public let recordedPoses: [Pose]

    /// Reads a recording.
    /// - Parameter url: A `.jsonl` file.
    /// - Throws: ``RecordingError`` naming the file (and line) when it is missing, unreadable
    ///   or malformed.
    public init(contentsOf url: URL) throws(RecordingError) {
        recordedPoses = try Self.load(contentsOf: url)
    }

    /// Wraps poses that are already in memory.
    public init(poses: [Pose]) {
        recordedPoses = poses
    }

    /// The recorded poses, as fast as the consumer takes them (no pacing).
    public func poses() -> AsyncStream<Pose> {
        AsyncStream(Pose.self, bufferingPolicy: .unbounded) { continuation in
            for pose in recordedPoses { continuation.yield(pose) }
            continuation.finish()
        }
    }

    /// Reads every pose of a JSON Lines file.
    /// - Parameter url: The file.
    /// - Returns: The poses, in file order.
    /// - Throws: ``RecordingError`` naming the file (and line) when it is missing, unreadable
    ///   or malformed.
    public static func load(contentsOf url: URL) throws(RecordingError) -> [Pose] {
        let data = try RecordingFiles.read(url)
        return try decode(data, file: url.path)
    }

    /// Decodes the bytes of a JSON Lines recording.
    /// - Parameters:
    ///   - data: UTF-8 text, one pose a line (`\n` or `\r\n`); blank lines are skipped.
    ///   - file: The name to report in errors.
    /// - Throws: ``RecordingError`` naming `file`, the 1-based line and the column.
    public static func decode(_ data: Data, file: String? = nil) throws(RecordingError) -> [Pose] {
        var poses: [Pose] = []
        var lineNumber = 0
        var lineStart = data.startIndex
        while lineStart < data.endIndex {
            let lineEnd = data[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            lineNumber += 1
            var bytes = Array(data[lineStart..<lineEnd])
            lineStart = lineEnd < data.endIndex ? data.index(after: lineEnd) : data.endIndex
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            do {
                poses.append(try PoseJSONLine.decode(bytes: bytes))
            } catch {
                throw error.located(file: file, line: lineNumber)
            }
        }
        return poses
    }
}

/// File access shared by the recording readers: clear errors for missing and unreadable files.
enum RecordingFiles {
    /// The bytes of a file: a regular file at once, anything else (a FIFO, `/dev/stdin`, a shell's
    /// `<(command)`, a symbolic link to one of them) read as a stream, in order, to its end.
    static func read(_ url: URL) throws(RecordingError) -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw RecordingError(.fileNotFound, file: url.path, detail: "no such file")
        }
        guard !isDirectory.boolValue else {
            throw RecordingError(.unreadable, file: url.path, detail: "is a folder, expected a file")
        }
        let type = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
        if type == .typeRegular {
            do {
                return try Data(contentsOf: url)
            } catch {
                throw RecordingError(
                    .unreadable, file: url.path, detail: "cannot read: \(error.localizedDescription)")
            }
        }
        // `Data(contentsOf:)` expects a file of known size and fails on a pipe ("You don't have
        // permission"): a stream is read until its writer closes it.
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw RecordingError(
                .unreadable, file: url.path, detail: "cannot open: \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw RecordingError(
                .unreadable, file: url.path, detail: "cannot read as a stream: \(error.localizedDescription)")
        }
    }
}
