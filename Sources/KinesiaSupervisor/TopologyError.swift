import KinesiaJSON
import KinesiaMotion

/// A topology file that cannot be used, with the file, the line and column, and the field to fix.
///
/// Its ``description`` is the line `kinesia up` prints:
/// `deploy/local.json:9:47: processes[2].restart: expected one of always, on-failure, never, got "sometimes"`.
public struct TopologyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file, as given to the loader.
    public var file: String
    /// The path of the bad field (`processes[2].restart`), or `nil` for the whole file.
    public var field: String?
    /// What is wrong, in words.
    public var message: String
    /// The 1-based line of the problem: where the text stops being JSON, or where the bad field
    /// (or, when it is missing, the object that lacks it) starts; `nil` when the file could not
    /// be read.
    public var line: Int?
    /// The 1-based column (in UTF-8 bytes) in ``line``.
    public var column: Int?

    /// Creates an error.
    public init(file: String, field: String?, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.field = field
        self.message = message
        self.line = line
        self.column = column
    }

    /// `FILE:LINE:COLUMN: FIELD: MESSAGE` (without what is not known).
    public var description: String {
        var place = file
        if let line {
            place += ":\(line)"
            if let column { place += ":\(column)" }
        }
        if let field { return "\(place): \(field): \(message)" }
        return "\(place): \(message)"
    }
}

/// A validation failure before it is attached to a file.
public struct TopologyValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path of the bad field, or `nil` for the whole topology.
    public var field: String?
    /// What is wrong, in words.
    public var message: String

    /// Creates an error.
    public init(field: String?, message: String) {
        self.field = field
        self.message = message
    }

    /// `FIELD: MESSAGE`.
    public var description: String {
        if let field { "\(field): \(message)" } else { message }
    }
}

extension TopologyError {
    /// The error of a file that is not JSON.
    init(file: String, syntaxError error: JSONSyntaxError) {
        self.init(
            file: file, field: nil, message: "not valid JSON: \(error.message)", line: error.line,
            column: error.column)
    }

    /// The error of a field, located in the file's text.
    init(file: String, path: [JSONPathComponent], message: String, in bytes: [UInt8]) {
        let field = JSONPathComponent.describe(path)
        let position = JSONParser.location(of: path, in: bytes)
        self.init(
            file: file, field: field.isEmpty ? nil : field, message: message, line: position?.line,
            column: position?.column)
    }

    /// The path of a field as validation names it (`processes[1].after[0]`).
    static func path(ofField field: String?) -> [JSONPathComponent] {
        guard let field else { return [] }
        var path: [JSONPathComponent] = []
        for part in field.split(separator: ".") {
            var rest = part[...]
            if let bracket = rest.firstIndex(of: "[") {
                if bracket != rest.startIndex { path.append(.key(String(rest[..<bracket]))) }
                rest = rest[bracket...]
                while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                    if let index = Int(rest[rest.index(after: rest.startIndex)..<close]) {
                        path.append(.index(index))
                    }
                    rest = rest[rest.index(after: close)...]
                }
            } else {
                path.append(.key(String(rest)))
            }
        }
        return path
    }
}
