/// Text from outside (a file, the bus, a command line) made safe to show: the one place where
/// control characters are escaped and quoted input is cut, used by every error message and
/// every printer of the package.
///
/// - ``escapingControlCharacters`` is for text printed whole (a topic, a health report's
///   process name, an event's JSON on `kinesia listen`): a terminal never receives an escape
///   sequence from the bus.
/// - ``quotedExcerpt(limit:)`` is for input quoted in an error: escaped too, in double quotes,
///   and cut to `limit` characters with the full size said, so that a 100 MB joint name gives
///   an error of a hundred bytes that still names what is wrong.
///
/// ```swift
/// "cam\u{1B}[2J".escapingControlCharacters       // cam\u{1B}[2J (as printable text)
/// String(repeating: "x", count: 1_000).quotedExcerpt(limit: 8)
/// // "xxxxxxxx..." (1000 bytes)
/// ```
extension String {
    /// The longest excerpt of input that errors quote, in characters.
    package static let quotedExcerptLimit = 64

    /// The text with every control character written as a Swift escape (`\u{1B}`), so that
    /// printing it moves no cursor, clears no screen and sets no terminal title.
    ///
    /// Escaped: C0 controls (U+0000 to U+001F, tab and newline included: a printed line stays
    /// one line), DEL (U+007F), C1 controls (U+0080 to U+009F, which some terminals read as
    /// CSI), the bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069) and
    /// the line and paragraph separators (U+2028, U+2029). Everything else is kept as it is.
    package var escapingControlCharacters: String { escaping(json: false) }

    /// The text with the same characters as ``escapingControlCharacters`` written as JSON
    /// escapes (`\u001B`): a JSON line stays valid JSON (inside a string the escape means the
    /// same character) and stays one line that a terminal shows without acting on it.
    package var escapingControlCharactersForJSON: String { escaping(json: true) }

    private func escaping(json: Bool) -> String {
        guard unicodeScalars.contains(where: \.needsEscaping) else { return self }
        var out = ""
        out.reserveCapacity(utf8.count + 16)
        for scalar in unicodeScalars {
            guard scalar.needsEscaping else {
                out.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            out += json ? "\\u" + String(repeating: "0", count: 4 - hex.count) + hex : "\\u{" + hex + "}"
        }
        return out
    }

}

extension StringProtocol {
    /// The text as an error quotes it: in double quotes, control characters escaped, cut to
    /// `limit` characters (then followed by `...` and the full size in bytes).
    ///
    /// - Parameter limit: The most characters of the text to keep.
    package func quotedExcerpt(limit: Int = String.quotedExcerptLimit) -> String {
        let limit = Swift.max(1, limit)
        var excerpt = ""
        var count = 0
        var cut = false
        for character in self {
            if count == limit {
                cut = true
                break
            }
            excerpt.append(character)
            count += 1
        }
        let quoted = "\"" + excerpt.escapingControlCharacters + (cut ? "..." : "") + "\""
        return cut ? quoted + " (\(utf8.count) bytes)" : quoted
    }
}

extension Unicode.Scalar {
    /// Whether ``Swift/String/escapingControlCharacters`` writes this scalar as an escape.
    var needsEscaping: Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
