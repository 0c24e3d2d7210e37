/// Why a recording could not be read: which file, which line, and what was wrong.
///
/// The ``description`` is ready for a user: `walk.jsonl:12: "t" must be a number, found a string`.
///
/// ```swift
/// do {
///     let poses = try JSONLinesRecording.load(contentsOf: url)
/// } catch {
///     print(error)   // names the file and line
/// }
/// ```
public struct RecordingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem.
    public enum Kind: String, Hashable, Sendable {
        /// The file or folder does not exist.
        case fileNotFound
        /// The file exists but could not be read (permissions, a folder where a file was
        /// expected, an I/O error).
        case unreadable
        /// The text is not valid JSON (or not UTF-8).
        case invalidJSON
        /// The JSON is valid but is not a pose of the format: a missing key, a wrong type, an
        /// unknown joint, a value out of range.
        case invalidPose
        /// An OpenPose folder holds no `*_keypoints.json` file.
        case noFrames
    }

    /// The kind of problem.
    public var kind: Kind
    /// The file or folder, as given by the caller; `nil` when decoding text that has no file.
    public var file: String?
    /// The 1-based line in ``file``, for line-oriented formats.
    public var line: Int?
    /// What was wrong, for a person to read.
    public var detail: String

    /// Creates an error.
    public init(_ kind: Kind, file: String? = nil, line: Int? = nil, detail: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.detail = detail
    }

    /// `file:line: detail`, `file: detail` or `detail`, depending on what is known.
    public var description: String {
        switch (file, line) {
        case (let file?, let line?): "\(file):\(line): \(detail)"
        case (let file?, nil): "\(file): \(detail)"
        case (nil, let line?): "line \(line): \(detail)"
        case (nil, nil): detail
        }
    }

    /// The same error, located in `file` (and `line`, when given).
    func located(file: String?, line: Int? = nil) -> RecordingError {
        var copy = self
        copy.file = file
        if let line { copy.line = line }
        return copy
    }
}
