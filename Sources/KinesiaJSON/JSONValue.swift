/// A parsed JSON value: the small, strict JSON model the project's readers share.
///
/// Numbers are always `Double` and always finite (the parser rejects numbers that overflow);
/// objects reject duplicate keys. Used by the recording readers and ``MotionJSON``; it is
/// `package` API, not part of the SDK.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A short name of the value's type, for error messages ("a number", "an object"...).
    package var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A syntax error in JSON text, with where it was found: the byte offset, the line and the
/// column.
package struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    package var message: String
    /// The 0-based byte offset in the text.
    package var offset: Int
    /// The 1-based line (lines end with `\n`).
    package var line: Int
    /// The 1-based column in the line, in UTF-8 bytes.
    package var column: Int

    /// Creates an error; without `line` and `column`, the text is taken to be one line.
    package init(_ message: String, at offset: Int, line: Int = 1, column: Int? = nil) {
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column ?? offset + 1
    }

    /// `MESSAGE at line L, column C`.
    package var description: String { "\(message) at line \(line), column \(column)" }
}

/// Where something is in JSON text: the byte offset and the 1-based line and column.
package struct JSONPosition: Hashable, Sendable {
    /// The 0-based byte offset.
    package var offset: Int
    /// The 1-based line (lines end with `\n`).
    package var line: Int
    /// The 1-based column in the line, in UTF-8 bytes.
    package var column: Int

    /// The line and column of `offset` in `bytes`.
    package init(offset: Int, in bytes: [UInt8]) {
        let end = min(max(offset, 0), bytes.count)
        var line = 1
        var lineStart = 0
        for position in 0..<end where bytes[position] == 0x0A {
            line += 1
            lineStart = position + 1
        }
        self.offset = offset
        self.line = line
        self.column = offset - lineStart + 1
    }
}

/// One step of a path into a JSON value: an object's key or an array's index.
package enum JSONPathComponent: Hashable, Sendable {
    case key(String)
    case index(Int)

    /// The path as a reader writes it: `processes[2].restart` (empty for the whole value).
    package static func describe(_ path: [JSONPathComponent]) -> String {
        var result = ""
        for component in path {
            switch component {
            case .index(let index): result += "[\(index)]"
            case .key(let key):
                // A key from the input: shown as it is when short and printable, quoted and
                // cut otherwise.
                let shown =
                    key.utf8.count <= String.quotedExcerptLimit
                        && key.escapingControlCharacters == key ? key : key.quotedExcerpt()
                result += result.isEmpty ? shown : ".\(shown)"
            }
        }
        return result
    }
}
