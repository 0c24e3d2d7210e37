/// Writes JSON text deterministically: fixed key order (the caller's), no whitespace, numbers in
/// Swift's shortest round-trip form (locale-independent), non-finite numbers as `null`.
package enum JSONWriter {
    /// The JSON text of `value`: the shortest decimal that reads back as the same `Double`
    /// (`0.1`, `30.0`, `1e-05`), or `null` when it is not finite.
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return value.description
    }

    /// Appends ``number(_:)`` of `value` to `out`, without an intermediate string.
    package static func appendNumber(_ value: Double, to out: inout String) {
        if value.isFinite { value.write(to: &out) } else { out += "null" }
    }

    /// The JSON text of an integral-looking value: `1080` rather than `1080.0` when `value` is a
    /// whole number that a `Double` holds exactly; otherwise as ``number(_:)``.
    package static func compactNumber(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            return String(Int64(value))
        }
        return number(value)
    }

    /// The JSON string literal of `string`, quoted and escaped.
    package static func string(_ string: String) -> String {
        var out = ""
        appendString(string, to: &out)
        return out
    }

    /// ``string(_:)`` of `string`, or `null` for none.
    package static func optionalString(_ string: String?) -> String {
        string.map(Self.string) ?? "null"
    }

    /// Appends ``string(_:)`` of `string` to `out`: ``JSONByteWriter``'s escapes, the one
    /// place they are written.
    package static func appendString(_ string: String, to out: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count + 2)
        JSONByteWriter.appendString(string, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }
}
