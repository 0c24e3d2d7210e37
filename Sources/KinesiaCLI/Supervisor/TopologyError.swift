import Foundation

/// A topology file that cannot be used, with the file and the field to fix.
///
/// Its ``description`` is the line `kinesia up` prints:
/// `deploy/local.json: processes[2].restart: expected one of always, on-failure, never, got "sometimes"`.
public struct TopologyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file, as given to the loader.
    public var file: String
    /// The path of the bad field (`processes[2].restart`), or `nil` for the whole file.
    public var field: String?
    /// What is wrong, in words.
    public var message: String

    /// Creates an error.
    public init(file: String, field: String?, message: String) {
        self.file = file
        self.field = field
        self.message = message
    }

    /// `FILE: FIELD: MESSAGE`.
    public var description: String {
        if let field { "\(file): \(field): \(message)" } else { "\(file): \(message)" }
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
    /// Translates a `DecodingError` into the field path and a sentence a person can act on.
    init(file: String, decodingError: DecodingError) {
        func path(_ codingPath: [any CodingKey]) -> String? {
            var result = ""
            for key in codingPath {
                if let index = key.intValue {
                    result += "[\(index)]"
                } else {
                    result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return result.isEmpty ? nil : result
        }
        switch decodingError {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            self.init(
                file: file, field: parent.map { "\($0).\(key.stringValue)" } ?? key.stringValue,
                message: "missing (required)")
        case .typeMismatch(let type, let context):
            self.init(
                file: file, field: path(context.codingPath),
                message: "expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            self.init(
                file: file, field: path(context.codingPath),
                message: "expected \(Self.describe(type)), got null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                self.init(file: file, field: nil, message: "not valid JSON")
            } else {
                self.init(file: file, field: path(context.codingPath), message: context.debugDescription)
            }
        @unknown default:
            self.init(file: file, field: nil, message: "\(decodingError)")
        }
    }

    /// Where `data` stops being JSON, as `Invalid value around line 3, column 7`, from
    /// `JSONSerialization`'s message (`JSONDecoder` gives none).
    static func syntaxDetail(_ data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            guard let range = text.range(of: "around character "),
                let offset = Int(text[range.upperBound...].prefix { $0.isNumber })
            else { return text.hasSuffix(".") ? String(text.dropLast()) : text }
            let before = data.prefix(offset)
            let line = before.count { $0 == UInt8(ascii: "\n") } + 1
            let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
            return "\(text[..<range.lowerBound])around line \(line), column \(column)"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type, is Int.Type: "a number"
        case is Bool.Type: "true or false"
        case is [String].Type: "an array of strings"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "\(type)"
        }
    }
}
