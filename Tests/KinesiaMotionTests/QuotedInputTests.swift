import Foundation
import KinesiaJSON
import KinesiaMotion
import KinesiaTestSupport
import Testing

/// Errors quote their input cut and escaped: a huge or hostile value gives a short error that
/// still says what is wrong.
struct QuotedInputTests {
    @Test func aHugeJointNameGivesABoundedErrorThatSaysWhatIsWrong() async {
        await offCooperativePool(.computing) {
            let name = String(repeating: "x", count: 10_000_000)
            let line = #"{"t":1.5,"points":{""# + name + #"":[1,2]}}"#
            #expect {
                _ = try PoseJSONLine.decode(line)
            } throws: { error in
                let text = String(describing: error)
                return text.utf8.count < 300 && text.contains("unknown joint \"xxxxxxxx")
                    && text.contains("(10000000 bytes)")
            }
        }
    }

    @Test func aHugeJointNameInARecordingFileGivesABoundedError() async throws {
        try await offCooperativePool(.computing) {
            // ESC [ 2 J, escaped as JSON writes it: the parser turns it into the control character.
            let name = String(repeating: #"\u001b[2J"#, count: 1_000_000)
            let path = NSTemporaryDirectory() + "kinesia-huge-joint-\(UUID().uuidString).jsonl"
            try (#"{"t":0,"points":{""# + name + #"":[1,2]}}"# + "\n").write(
                toFile: path, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect {
                _ = try JSONLinesRecording.load(contentsOf: URL(fileURLWithPath: path))
            } throws: { error in
                let text = String(describing: error)
                return text.utf8.count < 600 && text.contains("unknown joint") && !text.contains("\u{1B}")
            }
        }
    }

    @Test func aHugeDuplicateKeyAndAHugeNumberGiveBoundedErrors() {
        let key = String(repeating: "k", count: 1_000_000)
        for line in [
            #"{""# + key + #"":1,""# + key + #"":2}"#, "{\"t\":1" + String(repeating: "0", count: 400) + "}",
        ] {
            #expect {
                _ = try PoseJSONLine.decode(line)
            } throws: { error in
                String(describing: error).utf8.count < 300
            }
        }
    }

    @Test func quotingEscapesControlCharactersAndSaysTheFullSize() {
        #expect("cam0".quotedExcerpt() == "\"cam0\"")
        #expect("a\u{1B}[2J\u{9B}b".quotedExcerpt() == #""a\u{1B}[2J\u{9B}b""#)
        #expect(String(repeating: "é", count: 100).quotedExcerpt(limit: 3) == "\"ééé...\" (200 bytes)")
        #expect("tab\there".escapingControlCharacters == #"tab\u{9}here"#)
        #expect("x\u{1B}".escapingControlCharactersForJSON == #"x\u001B"#)
        #expect("plain text, ünïcode".escapingControlCharacters == "plain text, ünïcode")
    }
}
