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
        // `write(to:)` hands over the digits without a string (``ByteSink``), where
        // `description` allocates one for a number of more than 15 characters.
        var sink = ByteSink()
        swap(&sink.bytes, &out)
        value.write(to: &sink)
        swap(&sink.bytes, &out)
    }

    /// Appends `value` or `null`.
    package static func appendOptionalNumber(_ value: Double?, to out: inout [UInt8]) {
        if let value { appendNumber(value, to: &out) } else { append("null", to: &out) }
    }

    /// Appends an integer in decimal.
    package static func appendInteger(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        // Most significant digit first, straight into `out` (no string, no slice).
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        } while divisor > 0
    }

    /// Appends `string` as a JSON string literal: quoted; `"`, `\\` and the control characters
    /// escaped (``JSONWriter/string(_:)`` writes through it).
    @usableFromInline
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

    /// What `write(to:)` writes into: the bytes of the text it is given.
    private struct ByteSink: TextOutputStream {
        var bytes: [UInt8] = []

        mutating func write(_ string: String) {
            var string = string
            string.withUTF8 { bytes.append(contentsOf: $0) }
        }

        /// The standard library's way in for a number's ASCII digits (a requirement of
        /// `TextOutputStream`): taken as they are, where ``write(_:)`` would receive them as a
        /// string, allocated when longer than 15 bytes (`137.25000000000003`).
        mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
            bytes.append(contentsOf: buffer)
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
