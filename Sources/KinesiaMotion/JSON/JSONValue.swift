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

/// A syntax error in JSON text, with the byte offset where it was found.
package struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    package var message: String
    /// The 0-based byte offset in the text.
    package var offset: Int

    package init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }

    package var description: String { "\(message) at column \(offset + 1)" }
}
