import KinesiaJSON

/// Why a recording could not be read: which file, which line, and what was wrong.
///
/// The ``description`` is ready for a user, `FILE:LINE:COLUMN: DETAIL` as compilers write it:
/// `walk.jsonl:12:7: "t" must be a number, found a string`.
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
    /// The 1-based line in ``file`` where the problem is.
    public var line: Int?
    /// The 1-based column (in UTF-8 bytes) in ``line`` where the problem is: where the text
    /// stops being JSON, or where the value with the wrong shape starts.
    public var column: Int?
    /// What was wrong, for a person to read.
    public var detail: String

    /// Creates an error.
    public init(_ kind: Kind, file: String? = nil, line: Int? = nil, column: Int? = nil, detail: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.column = column
        self.detail = detail
    }

    /// `file:line:column: detail`, `file:line: detail`, `file: detail`, `line L, column C: detail`
    /// or `detail`, depending on what is known.
    public var description: String {
        var position = ""
        if let line {
            position = column.map { "line \(line), column \($0)" } ?? "line \(line)"
        } else if let column {
            position = "column \(column)"
        }
        guard let file else { return position.isEmpty ? detail : "\(position): \(detail)" }
        switch (line, column) {
        case (let line?, let column?): return "\(file):\(line):\(column): \(detail)"
        case (let line?, nil): return "\(file):\(line): \(detail)"
        default: return "\(file): \(detail)"
        }
    }

    /// The same error, located in `file` (and `line`, when given).
    func located(file: String?, line: Int? = nil) -> RecordingError {
        var copy = self
        copy.file = file
        if let line { copy.line = line }
        return copy
    }

    /// The error of text that is not JSON, with its column, and its line when the text is a
    /// whole file (`wholeFile`) rather than one line of one.
    init(_ error: JSONSyntaxError, wholeFile: Bool) {
        self.init(
            .invalidJSON, line: wholeFile ? error.line : nil, column: error.column,
            detail: "invalid JSON: \(error.message)")
    }

    /// The error of JSON that is not what the format expects, at the column (and, for a
    /// `wholeFile`, the line) of the value that is wrong in `bytes` (the text that was parsed).
    init(_ error: JSONShapeError, in bytes: [UInt8], wholeFile: Bool) {
        let position = error.path.isEmpty ? nil : JSONParser.location(of: error.path, in: bytes)
        self.init(
            .invalidPose, line: wholeFile ? position?.line : nil, column: position?.column,
            detail: error.message)
    }
}
