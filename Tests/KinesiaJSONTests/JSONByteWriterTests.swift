import Testing

@testable import KinesiaJSON

/// The byte writer a worker writes snapshots with: numbers exactly as the `String` writer writes
/// them, strings with JSON's escapes (the `String` writer writes its strings through it).
@Suite struct JSONByteWriterTests {
    @Test(arguments: [
        0, -0.0, 0.1, 1e-05, 30, 95.25, -179.999, 1e300, -1e-300, 123_456_789.125, .pi,
        .greatestFiniteMagnitude, .leastNonzeroMagnitude, .nan, .infinity, -.infinity,
    ])
    func numbersAreTheStringWritersBytes(value: Double) {
        var bytes: [UInt8] = []
        JSONByteWriter.appendNumber(value, to: &bytes)
        var text = ""
        JSONWriter.appendNumber(value, to: &text)
        #expect(bytes == Array(text.utf8))
    }

    /// Strings are quoted with JSON's escapes (the `String` writer writes through this one).
    @Test(arguments: [
        ("", #""""#),
        ("keepTrunkUpright", #""keepTrunkUpright""#),
        ("quote \" and backslash \\", #""quote \" and backslash \\""#),
        ("line\nreturn\rtab\t", #""line\nreturn\rtab\t""#),
        ("\u{08}\u{0C}\u{00}\u{1F}\u{7F}", "\"\\b\\f\\u0000\\u001f\u{7F}\""),
        ("ombro à direita, ñ 🦵", "\"ombro à direita, ñ 🦵\""),
    ])
    func stringsAreQuotedWithJSONsEscapes(string: String, expected: String) {
        var bytes: [UInt8] = []
        JSONByteWriter.appendString(string, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(JSONWriter.string(string) == expected)
    }

    @Test(arguments: [0, 7, -7, 10, 1_000, -987_654_321, Int.max, Int.min])
    func integersAreTheirDecimalText(value: Int) {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        JSONByteWriter.appendInteger(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "[" + String(value))
    }

    @Test func integersNamesAndLiterals() {
        var bytes: [UInt8] = []
        JSONByteWriter.append("{\"n\":", to: &bytes)
        JSONByteWriter.appendInteger(-42, to: &bytes)
        JSONByteWriter.append(",\"ok\":", to: &bytes)
        JSONByteWriter.appendBool(true, to: &bytes)
        JSONByteWriter.append(",\"names\":", to: &bytes)
        JSONByteWriter.appendNames(["a", "b\"c"], to: &bytes)
        JSONByteWriter.append(",\"none\":", to: &bytes)
        JSONByteWriter.appendOptionalNumber(nil, to: &bytes)
        JSONByteWriter.append("}", to: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self) == #"{"n":-42,"ok":true,"names":["a","b\"c"],"none":null}"#
        )
    }
}
