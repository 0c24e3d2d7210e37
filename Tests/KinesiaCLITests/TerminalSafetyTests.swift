import Foundation
import KinesiaCLI
import KinesiaJSON
import KinesiaListen
import KinesiaMotion
import KinesiaService
import KinesiaWire
import Testing

/// Bytes from the bus never reach the operator's terminal raw: `listen`, `watch`, `status` and
/// the worker's log escape every control character of what they print.
struct TerminalSafetyTests {
    /// Clear screen, a C1 CSI (U+009B), BEL, a newline, DEL and a right-to-left override.
    static let hostile = "evil\u{1B}[2J\u{9B}31m\u{07}\n\u{7F}\u{202E}end"

    static let report = HealthReport(
        process: hostile, role: "work\u{1B}]0;pwned\u{07}er", pid: 4242, uptime: 3,
        counters: ["poses\u{1B}[31m": 7])

    static func healthMessage() throws -> WireMessage {
        WireMessage(
            topic: try .health(process: "evil"),
            header: WireHeader(kind: .health, streamID: StreamID(1), sequence: 0, sentAt: 0),
            body: .health(report))
    }

    /// Whether `text` holds a character a terminal would act on.
    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value)
        }
    }

    @Test func listenPrintsAHealthReportsControlCharactersEscapedInTextAndJSON() throws {
        let message = try Self.healthMessage()
        let text = ListenLine.text(message)
        #expect(!Self.hasControlCharacters(text) && !text.contains("\n"), "\(text.debugDescription)")
        #expect(text.contains(#"work\u{1B}]0;pwned\u{7}er"#), "\(text)")
        #expect(text.contains(#"poses\u{1B}[31m=7"#), "\(text)")

        let json = ListenLine.json(message)
        #expect(!Self.hasControlCharacters(json) && !json.contains("\n"), "\(json.debugDescription)")
        // Still JSON, with the same strings.
        let parsed = try HealthReport(json: json)
        #expect(parsed.process == Self.hostile)
        #expect(parsed.role == Self.report.role)
    }

    @Test func listenEscapesAnEventsRawControlBytes() throws {
        let message = WireMessage(
            topic: try .event(camera: "cam0", session: "left"),
            header: WireHeader(kind: .event, streamID: StreamID(1), sequence: 0, sentAt: 0),
            body: .event(json: "{\"type\":\"x\u{1B}[2J\u{9B}\"}"))
        #expect(!Self.hasControlCharacters(ListenLine.text(message)))
        let json = ListenLine.json(message)
        #expect(!Self.hasControlCharacters(json))
        // Raw control bytes in a string are not JSON: the body is given whole, as an escaped
        // string under `payload`, and reads back as it came.
        let values = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any]
        #expect(values?["payload"] as? String == "{\"type\":\"x\u{1B}[2J\u{9B}\"}", "\(json)")
    }

    @Test func watchShowsAProcessNameRoleAndCountersEscaped() throws {
        var state = WatchState()
        _ = state.apply(try Self.healthMessage(), at: 1)
        let table = WatchRenderer.processLines(state, now: 1.5)
        let view = WatchRenderer.render(state, now: 1.5, width: 400)
        let progress = WatchRenderer.progressLines(state, now: 1.5)
        for line in table + view + progress {
            #expect(!Self.hasControlCharacters(line), "\(line.debugDescription)")
        }
        #expect(
            table.contains { $0.contains(#"evil\u{1B}[2J\u{9B}31m\u{7}\u{A}\u{7F}\u{202E}end"#) }, "\(table)")
        #expect(table.contains { $0.contains(#"poses\u{1B}[31m 7"#) }, "\(table)")
    }

    @Test func statusShowsAProcessNameRoleAndCountersEscaped() {
        let lines = StatusTable.render([Self.report])
        for line in lines { #expect(!Self.hasControlCharacters(line), "\(line.debugDescription)") }
        #expect(lines.count == 2)
        #expect(lines[1].hasPrefix(#"evil\u{1B}[2J"#), "\(lines)")
        #expect(lines[1].contains(#"work\u{1B}]0;pwned\u{7}er"#), "\(lines)")
    }

    @Test func theLogEscapesAMalformedTopicFromTheBus() {
        let sink = CapturedText()
        let log = Logger(label: "kinesia worker", sink: sink)
        let topic = "pose/cam0/\u{1B}[2J\u{1B}]2;title\u{07}"
        log.warning("dropped a malformed message on \(topic.quotedExcerpt(limit: Topic.maximumLength))")
        log.info("line one\nline two")
        #expect(
            sink.lines == [
                #"kinesia worker: warning: dropped a malformed message on "pose/cam0/\u{1B}[2J\u{1B}]2;title\u{7}""#,
                #"kinesia worker: info: line one\u{A}line two"#,
            ])
    }
}
