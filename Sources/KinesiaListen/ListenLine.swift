import Foundation
public import KinesiaClient
import KinesiaJSON
import KinesiaMotion
public import KinesiaService
public import KinesiaWire

/// The lines `kinesia listen` prints and warns: one message as readable text or as one JSON
/// object, and the warnings of an exactly-once delivery.
///
/// ```swift
/// ListenLine.text(message)   // "event/cam0/left/ #7 {\"type\":\"repCompleted\",...}"
/// ListenLine.json(message)   // {"topic":"event/cam0/left/","stream":"…","seq":7,"type":…}
/// ```
public enum ListenLine {
    /// How messages are printed.
    public enum Format: String, CaseIterable, Sendable {
        /// One readable line per message.
        case text
        /// One JSON object per message.
        case json
    }

    /// `message` in `format`.
    public static func line(_ message: WireMessage, format: Format) -> String {
        format == .json ? json(message) : text(message)
    }

    /// The warning lines of one exactly-once delivery that are to be shown: events that cannot be
    /// had any more (reason `lost`) and malformed messages (reason `malformed.<code>`), each
    /// counted in `warnings` and throttled there.
    public static func warnings(
        for delivery: ExactlyOnceSubscriber.Delivery, into warnings: inout WarningThrottle
    ) -> [String] {
        switch delivery {
        case .lost(let topic, let sequences):
            let line = warnings.admit(
                "lost",
                "\(topic): #\(sequences.lowerBound)..<#\(sequences.upperBound) cannot be had any more "
                    + "(not retained, damaged in the sender's journal, or the sender serves no replay)")
            return line.map { [$0] } ?? []
        case .malformed(let topic, let reason):
            let line = warnings.admit(
                "malformed.\(reason.code)",
                "malformed message on \(topic.quotedExcerpt(limit: Topic.maximumLength)): \(reason)")
            return line.map { [$0] } ?? []
        case .message, .health:
            return []
        }
    }

    /// One JSON object: `topic`, `stream`, `seq`, then the payload's fields.
    ///
    /// The line's own values always win: a payload that is one JSON object with none of the
    /// keys `topic`, `stream` and `seq` gives its fields, in its order, after them; any other
    /// payload (not JSON, two objects, an array, duplicate keys, or a field named like one of the
    /// line's own) is given whole, as a JSON string, under `payload`. The line is always one
    /// valid JSON object.
    public static func json(_ message: WireMessage) -> String {
        let head =
            "{\"topic\":\"\(message.topic.string)\",\"stream\":\"\(message.header.streamID)\",\"seq\":\(message.header.sequence)"
        let body: String
        switch message.body {
        case .pose(let pose): body = PoseJSONLine.encode(pose)
        case .event(let json), .snapshot(let json), .session(let json): body = json
        case .health(let report):
            body = (try? report.json()).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
        // The payload's strings came from the bus: no control character reaches the terminal.
        return merge(head, body).escapingControlCharactersForJSON
    }

    /// The keys of a ``json(_:)`` line that no payload field may take.
    static let ownKeys: Set<String> = ["topic", "stream", "seq"]

    /// `head` (an unclosed object) followed by the fields of the JSON object `body`, or by
    /// `"payload":` and `body` as a string when `body` is not exactly one JSON object (strict:
    /// ``JSONParser``) or has a field named like one of ``ownKeys``.
    static func merge(_ head: String, _ body: String) -> String {
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard case .object(let fields)? = try? JSONParser.parse(trimmed),
            fields.keys.allSatisfy({ !ownKeys.contains($0) })
        else {
            return head + ",\"payload\":" + JSONWriter.string(trimmed) + "}"
        }
        let inner = trimmed.dropFirst().dropLast().trimmingCharacters(in: .whitespacesAndNewlines)
        return inner.isEmpty ? head + "}" : head + "," + inner + "}"
    }

    /// One readable line: the topic, `#seq`, and the payload, control characters escaped (the
    /// payload's text came from the bus).
    public static func text(_ message: WireMessage) -> String {
        unescapedText(message).escapingControlCharacters
    }

    private static func unescapedText(_ message: WireMessage) -> String {
        let head = "\(message.topic.string) #\(message.header.sequence)"
        switch message.body {
        case .pose(let pose):
            var line = head + " t=\(pose.timestamp) joints=\(pose.points.count)"
            if let size = pose.imageSize { line += " \(Int(size.width))x\(Int(size.height))" }
            return line
        case .event(let json), .snapshot(let json), .session(let json):
            return head + " " + json
        case .health(let report):
            let counters = report.counters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return head + " \(report.role) pid=\(report.pid) up=\(String(format: "%.1f", report.uptime))s "
                + counters.joined(separator: " ")
        }
    }
}
