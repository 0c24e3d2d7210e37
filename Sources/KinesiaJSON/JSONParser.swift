/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Strict means: no comments, no trailing commas, no `NaN` or `Infinity`, no leading zeros,
/// no unescaped control characters in strings, no duplicate keys, nothing after the value but
/// whitespace, and numbers that overflow `Double` are errors. Nesting is limited to
/// ``maximumDepth`` levels so that hostile input cannot exhaust the stack. Errors name the line
/// and column where the text stops being JSON; ``location(of:in:)`` finds where a value is, so
/// that a reader can point at the value whose shape is wrong.
///
/// It is the one JSON reader of the project: recordings, standard input, events, snapshots,
/// health reports and topology files all go through it.
package struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    package static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    /// The path ``location(of:in:)`` looks for (empty when only parsing).
    private let target: [JSONPathComponent]
    /// The deepest value found on ``target``: its offset and how many components it matched.
    private var found: (offset: Int, depth: Int)?

    private init(bytes: [UInt8], target: [JSONPathComponent] = []) {
        self.bytes = bytes
        self.target = target
    }

    /// An error at `offset`, with its line and column.
    private func error(_ message: String, at offset: Int) -> JSONSyntaxError {
        let position = JSONPosition(offset: offset, in: bytes)
        return JSONSyntaxError(message, at: offset, line: position.line, column: position.column)
    }

    /// Parses one JSON value that spans the whole text (surrounding whitespace allowed).
    package static func parse(_ text: some StringProtocol) throws(JSONSyntaxError) -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses one JSON value that spans all of `bytes` (surrounding whitespace allowed).
    package static func parse(bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument()
    }

    /// Where the value at `path` starts in `bytes`, or, when it is absent, where its deepest
    /// present ancestor starts (the whole document for a missing top-level key); `nil` when
    /// `bytes` is not valid JSON.
    ///
    /// ```swift
    /// let text = Array("{\"processes\": [\n  {\"name\": \"b\"},\n  {\"name\": 7}]}".utf8)
    /// JSONParser.location(of: [.key("processes"), .index(1), .key("name")], in: text)
    /// // line 3, column 12: where the 7 is
    /// ```
    package static func location(of path: [JSONPathComponent], in bytes: [UInt8]) -> JSONPosition? {
        var parser = JSONParser(bytes: bytes, target: path)
        guard (try? parser.parseDocument()) != nil else { return nil }
        return JSONPosition(offset: parser.found?.offset ?? 0, in: bytes)
    }

    private mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        if !target.isEmpty { found = (index, 0) }
        let value = try parseValue(depth: 0, level: target.isEmpty ? nil : 0)
        skipWhitespace()
        if index < bytes.count {
            throw error("unexpected text after the JSON value", at: index)
        }
        return value
    }

    /// For the member `component` of a container that is on the target path after `level`
    /// components (`nil`: not on it): records the member's value, starting at ``index``, when it
    /// is on the path too, and returns its level.
    private mutating func enter(_ component: JSONPathComponent, level: Int?) -> Int? {
        guard let level, level < target.count, target[level] == component else { return nil }
        found = (index, level + 1)
        return level + 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "end of input" }
        let byte = bytes[index]
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func parseValue(depth: Int, level: Int? = nil) throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input", at: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1, level: level)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1, level: level)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("expected a JSON value, found \(describeCurrent())", at: index)
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let start = index
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected -> Bool in
            guard start + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[start + offset] != expected[offset] { return false }
            return true
        }
        guard matches else {
            throw error("expected a JSON value, found \(describeCurrent())", at: start)
        }
        index += count
    }

    private mutating func parseObject(depth: Int, level: Int?) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw error("nesting too deep", at: index) }
        index += 1  // {
        var object: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key, found \(describeCurrent())", at: index)
            }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':', found \(describeCurrent())", at: index)
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth, level: enter(.key(key), level: level))
            guard object.updateValue(value, forKey: key) == nil else {
                throw error("duplicate key \(key.quotedExcerpt())", at: keyOffset)
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object", at: index) }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(object)
            }
            throw error("expected ',' or '}', found \(describeCurrent())", at: index)
        }
    }

    private mutating func parseArray(depth: Int, level: Int?) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw error("nesting too deep", at: index) }
        index += 1  // [
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            let memberLevel = enter(.index(array.count), level: level)
            array.append(try parseValue(depth: depth, level: memberLevel))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array", at: index) }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(array)
            }
            throw error("expected ',' or ']', found \(describeCurrent())", at: index)
        }
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw error("invalid number", at: start)
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && isDigit(bytes[index]) {
                throw error("invalid number: leading zero", at: start)
            }
        } else {
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("invalid number: no digit after '.'", at: start)
            }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"))
            {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw error("invalid number: no digit in exponent", at: start)
            }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw error("number out of range: \(text.quotedExcerpt())", at: start)
        }
        return value
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape", at: index) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape", at: index)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1  // opening quote
        var runStart = index
        var result = ""
        while true {
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                result += String(decoding: bytes[runStart..<index], as: UTF8.self)
                index += 1
                return result
            }
            if byte < 0x20 {
                throw error("unescaped control character in string", at: index)
            }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            // An escape: flush the run so far.
            result += String(decoding: bytes[runStart..<index], as: UTF8.self)
            let escapeOffset = index
            index += 1
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "\""): result.append("\"")
            case UInt8(ascii: "\\"): result.append("\\")
            case UInt8(ascii: "/"): result.append("/")
            case UInt8(ascii: "b"): result.append("\u{08}")
            case UInt8(ascii: "f"): result.append("\u{0C}")
            case UInt8(ascii: "n"): result.append("\n")
            case UInt8(ascii: "r"): result.append("\r")
            case UInt8(ascii: "t"): result.append("\t")
            case UInt8(ascii: "u"):
                let first = try parseHex4()
                var scalarValue = first
                if (0xD800...0xDBFF).contains(first) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("unpaired surrogate in \\u escape", at: escapeOffset) }
                    index += 2
                    let second = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(second) else {
                        throw error("unpaired surrogate in \\u escape", at: escapeOffset)
                    }
                    scalarValue = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(scalarValue) else {
                    throw error("unpaired surrogate in \\u escape", at: escapeOffset)
                }
                result.unicodeScalars.append(scalar)
            default:
                throw error("invalid escape in string", at: escapeOffset)
            }
            runStart = index
        }
    }
}
