/// What was wrong with a JSON value's shape (a missing key, a wrong type, a bad value), and
/// where: the path of the value (a missing key's path names the key).
///
/// A reader that has the text turns ``path`` into a line and column with
/// ``JSONParser/location(of:in:)``.
package struct JSONShapeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The explanation, e.g. `"t" must be a number, found a string`.
    package var message: String
    /// The path of the value that is wrong (empty: the whole value, or not known).
    package var path: [JSONPathComponent]

    package init(_ message: String, path: [JSONPathComponent] = []) {
        self.message = message
        self.path = path
    }

    package var description: String { message }
}

/// Typed access to the members of a JSON object, with errors that name the key.
package struct JSONFields {
    /// The object's members.
    package let members: [String: JSONValue]
    /// Where the object is in the document (for errors).
    package let path: [JSONPathComponent]

    /// Reads `value` as an object.
    /// - Parameters:
    ///   - value: The value.
    ///   - what: Names it in the error when it is not an object.
    ///   - path: Where it is in the document; errors about its members extend it.
    package init(_ value: JSONValue, what: String = "the value", path: [JSONPathComponent] = [])
        throws(JSONShapeError)
    {
        guard case .object(let members) = value else {
            throw JSONShapeError("\(what) must be an object, found \(value.typeDescription)", path: path)
        }
        self.members = members
        self.path = path
    }

    /// The path of the member `key`.
    package func path(_ key: String) -> [JSONPathComponent] { path + [.key(key)] }

    /// An error about the member `key`.
    package func error(_ key: String, _ message: String) -> JSONShapeError {
        JSONShapeError(message, path: path(key))
    }

    /// Throws when the object has a key outside `allowed`.
    package func rejectUnknownKeys(allowed: Set<String>) throws(JSONShapeError) {
        for key in members.keys.sorted() where !allowed.contains(key) {
            throw error(key, "unknown key \(key.quotedExcerpt())")
        }
    }

    /// Whether `key` is present (with any value, `null` included).
    package func has(_ key: String) -> Bool { members[key] != nil }

    /// The value of `key`, or an error naming the missing key.
    package func value(_ key: String) throws(JSONShapeError) -> JSONValue {
        guard let value = members[key] else { throw error(key, "missing key \(key.quotedExcerpt())") }
        return value
    }

    /// The number at `key` (always finite).
    package func number(_ key: String) throws(JSONShapeError) -> Double {
        let value = try value(key)
        guard case .number(let number) = value else {
            throw error(key, "\(key.quotedExcerpt()) must be a number, found \(value.typeDescription)")
        }
        return number
    }

    /// The number at `key`, or `nil` when the key is absent or `null`.
    package func optionalNumber(_ key: String) throws(JSONShapeError) -> Double? {
        guard let value = members[key], value != .null else { return nil }
        return try number(key)
    }

    /// The whole number at `key` (a JSON number without a fractional part, within `Int` range).
    package func integer(_ key: String) throws(JSONShapeError) -> Int {
        let number = try number(key)
        guard number == number.rounded(), abs(number) < 9_007_199_254_740_992 else {
            throw error(
                key, "\(key.quotedExcerpt()) must be a whole number, found \(JSONWriter.number(number))")
        }
        return Int(number)
    }

    /// The Boolean at `key`.
    package func bool(_ key: String) throws(JSONShapeError) -> Bool {
        let value = try value(key)
        guard case .bool(let bool) = value else {
            throw error(key, "\(key.quotedExcerpt()) must be true or false, found \(value.typeDescription)")
        }
        return bool
    }

    /// The string at `key`.
    package func string(_ key: String) throws(JSONShapeError) -> String {
        let value = try value(key)
        guard case .string(let string) = value else {
            throw error(key, "\(key.quotedExcerpt()) must be a string, found \(value.typeDescription)")
        }
        return string
    }

    /// The array at `key`.
    package func array(_ key: String) throws(JSONShapeError) -> [JSONValue] {
        let value = try value(key)
        guard case .array(let array) = value else {
            throw error(key, "\(key.quotedExcerpt()) must be an array, found \(value.typeDescription)")
        }
        return array
    }

    /// The strings of the array at `key`.
    package func strings(_ key: String) throws(JSONShapeError) -> [String] {
        var result: [String] = []
        for (index, element) in try array(key).enumerated() {
            guard case .string(let string) = element else {
                throw JSONShapeError(
                    "\(key.quotedExcerpt()) must be an array of strings, found \(element.typeDescription) in it",
                    path: path(key) + [.index(index)])
            }
            result.append(string)
        }
        return result
    }

    /// The object at `key`.
    package func object(_ key: String) throws(JSONShapeError) -> JSONFields {
        try JSONFields(value(key), what: "\(key.quotedExcerpt())", path: path(key))
    }

    /// The object at `key`, or `nil` when the key is absent or `null`.
    package func optionalObject(_ key: String) throws(JSONShapeError) -> JSONFields? {
        guard let value = members[key], value != .null else { return nil }
        return try JSONFields(value, what: "\(key.quotedExcerpt())", path: path(key))
    }
}
