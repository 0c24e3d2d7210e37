import Testing

@testable import KinesiaJSON

struct JSONParserTests {
    @Test func parsesNestedValues() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2.5e2, true, false, null], "b": {"c": "d\u00e9\n"}} "#)
        #expect(
            value
                == .object([
                    "a": .array([.number(1), .number(-250), .bool(true), .bool(false), .null]),
                    "b": .object(["c": .string("dé\n")]),
                ]))
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
    }

    @Test(arguments: [
        "NaN", "Infinity", "-Infinity", "1e999", "-1e400", "01", "1.", ".5", "+1", "[1,]", "{\"a\":1,}",
        "{\"a\":1,\"a\":2}", "[1 2]", "\"abc", "\"\\x\"", "\"\\ud800\"", "{'a':1}", "tru", "[] []", "",
        "\"a\u{01}b\"", "// comment\n1",
    ])
    func rejectsInvalidJSON(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(text) }
    }

    @Test func limitsNestingDepth() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        #expect((try? JSONParser.parse(fine)) != nil)
    }

    @Test func reportsTheLineAndColumnOfAnErrorInSeveralLines() {
        #expect {
            try JSONParser.parse("{\n  \"a\": 1,\n  \"a\": 2\n}")
        } throws: { error in
            let error = error as? JSONSyntaxError
            return error?.message == "duplicate key \"a\"" && error?.line == 3 && error?.column == 3
                && error?.description == "duplicate key \"a\" at line 3, column 3"
        }
    }

    @Test func locatesAValueOrItsDeepestPresentAncestor() {
        let text = Array("{\n  \"a\": [1,\n    {\"b\": true}],\n  \"b\": 2\n}".utf8)
        #expect(
            JSONParser.location(of: [.key("a"), .index(1), .key("b")], in: text)
                == JSONPosition(offset: 23, in: text))
        #expect(JSONParser.location(of: [.key("a"), .index(1), .key("b")], in: text)?.line == 3)
        #expect(JSONParser.location(of: [.key("a"), .index(1), .key("b")], in: text)?.column == 11)
        // A missing key: where its object starts (not the "b" of the document, at line 4).
        #expect(JSONParser.location(of: [.key("a"), .index(0), .key("b")], in: text)?.line == 2)
        #expect(JSONParser.location(of: [.key("b")], in: text)?.line == 4)
        #expect(JSONParser.location(of: [.key("c")], in: text)?.offset == 0)
        #expect(JSONParser.location(of: [.key("a")], in: Array("{".utf8)) == nil)
    }

    @Test func reportsTheColumnOfTheError() {
        #expect(throws: JSONSyntaxError("expected ',' or '}', found '2'", at: 8)) {
            try JSONParser.parse(#"{"a": 1 2}"#)
        }
    }

    @Test(arguments: [0.1, 1.0 / 3.0, 95.25, 30.0, 1e-5, 6.02e23, -0.0, 1e300, Double.leastNonzeroMagnitude])
    func writesNumbersThatReadBackExactly(_ value: Double) throws {
        let text = JSONWriter.number(value)
        #expect(try JSONParser.parse(text) == .number(value))
    }

    @Test func writesNonFiniteNumbersAsNull() {
        #expect(JSONWriter.number(.nan) == "null")
        #expect(JSONWriter.number(.infinity) == "null")
        #expect(JSONWriter.compactNumber(1080) == "1080")
        #expect(JSONWriter.compactNumber(1080.5) == "1080.5")
    }

    @Test func escapesStrings() throws {
        let text = "a\"b\\c\nd\u{01}é"
        let json = JSONWriter.string(text)
        #expect(json == #""a\"b\\c\nd\u0001é""#)
        #expect(try JSONParser.parse(json) == .string(text))
    }
}
