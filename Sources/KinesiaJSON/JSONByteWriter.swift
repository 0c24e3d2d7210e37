/// ``JSONWriter``'s text, written as UTF-8 bytes into a buffer the caller keeps: the same bytes
/// as the `String` writer for every value, without a `String` to grow and copy out (a worker
/// writes a snapshot for about every other pose it analyses).
///
/// ```swift
/// var out: [UInt8] = []
/// JSONByteWriter.append("{\"t\":", to: &out)
/// JSONByteWriter.appendNumber(2.5, to: &out)
/// JSONByteWriter.append("}", to: &out)      // {"t":2.5}
/// ```
package enum JSONByteWriter {
    /// Appends literal text (a key, punctuation) as it is.
    @inlinable
    package static func append(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Appends `true` or `false`.
    @inlinable
    package static func appendBool(_ value: Bool, to out: inout [UInt8]) {
        append(value ? "true" : "false", to: &out)
    }

    /// Appends ``JSONWriter/number(_:)`` of `value`: its shortest round-trip decimal, or `null`.
    package static func appendNumber(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite else {
            append("null", to: &out)
            return
        }
        // A number's text fits a small string (15 bytes) almost always: no allocation.
        var text = value.description
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// Appends `value` or `null`.
    package static func appendOptionalNumber(_ value: Double?, to out: inout [UInt8]) {
        if let value { appendNumber(value, to: &out) } else { append("null", to: &out) }
    }

    /// Appends an integer in decimal.
    package static func appendInteger(_ value: Int, to out: inout [UInt8]) {
        var text = String(value)
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// Appends ``JSONWriter/string(_:)`` of `string`: quoted, with the same escapes.
    package static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): append("\\\"", to: &out)
                case UInt8(ascii: "\\"): append("\\\\", to: &out)
                case UInt8(ascii: "\n"): append("\\n", to: &out)
                case UInt8(ascii: "\r"): append("\\r", to: &out)
                case UInt8(ascii: "\t"): append("\\t", to: &out)
                case 0x08: append("\\b", to: &out)
                case 0x0C: append("\\f", to: &out)
                case ..<0x20:
                    append("\\u00", to: &out)
                    out.append(hexDigit(byte >> 4))
                    out.append(hexDigit(byte & 0xF))
                default:
                    out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A JSON array of names, in the order given.
    package static func appendNames(_ names: [String], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for index in names.indices {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(names[index], to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// A JSON array of raw values, in the order given (most often none: `[]`).
    package static func appendNames<Value: RawRepresentable<String>>(_ values: [Value], to out: inout [UInt8])
    {
        out.append(UInt8(ascii: "["))
        for index in values.indices {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(values[index].rawValue, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
