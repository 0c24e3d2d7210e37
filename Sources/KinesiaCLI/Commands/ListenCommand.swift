import Foundation
import KinesiaBus
import KinesiaClient
import KinesiaMotion
public import KinesiaWire

/// `kinesia listen [TOPIC-PREFIX...]`: prints the messages of the bus.
///
/// Text (the default) prints one readable line per message; `--format json` prints one JSON
/// object per message: `topic`, `stream`, `seq`, then the payload's fields (a pose in the
/// recordings' form `t`, `w`, `h`, `points`, `confidence`; an event, a snapshot or a health
/// report with its own JSON fields). Gaps and sender restarts are warned about on standard
/// error; malformed messages are reported there and counted, never fatal.
///
/// ```text
/// $ kinesia listen event/ --format json --count 1
/// {"topic":"event/cam0/left/","stream":"9f3c2a51d04e7b18","seq":0,"type":"visibilityChanged",...}
/// ```
public struct ListenCommand: ParsableCommand {
    /// The output format.
    public enum Format: String, CaseIterable, Sendable, ExpressibleByArgument {
        /// One readable line per message.
        case text
        /// One JSON object per message.
        case json
    }

    /// `listen`, with its help.
    public static let configuration = CommandConfiguration(
        name: "listen", summary: "Print the messages of the bus (all, or those under the given prefixes).",
        discussion: """
            Prefixes are matched byte for byte, as ZeroMQ does: end them with / (event/cam1/) so \
            that cam1 does not also match cam10. No prefix: every message. --format json prints \
            one object per line: topic, stream, seq, then the payload's fields. Gaps, sender \
            restarts and malformed messages are reported on standard error.
            """)

    /// The options.
    public static var arguments: [Argument<ListenCommand>] {
        [
            .positional("topic-prefix", \.prefixes, help: "Topic prefixes to receive (default: everything)."),
            .option(
                "format", \.format, valueName: "format", help: "Output format."),
            .option("count", \.count, valueName: "n", help: "Exit after N messages."),
            .option(
                "idle", \.idle, valueName: "seconds", help: "Exit after this long with nothing received."),
            BusProcess.busArgument(\.bus),
        ] + BusSecurityOptions.clientArguments(\.security)
    }

    /// The prefixes.
    public var prefixes: [String] = []
    /// `--format`.
    public var format = Format.text
    /// `--count`.
    public var count: Int?
    /// `--idle`.
    public var idle: Double?
    /// `--bus`.
    public var bus: String?
    /// `--key`, `--server-key`, `--insecure`.
    var security = BusSecurityOptions()

    /// A command with every default.
    public init() {}

    /// Checks `--count` and `--idle`.
    public func validate() throws(CLIError) {
        if let count, count < 1 { throw CLIError.usage("--count must be at least 1, got \(count)") }
        if let idle, idle <= 0 { throw CLIError.usage("--idle must be positive, got \(idle)") }
    }

    /// Prints messages until `--count`, `--idle` or a signal.
    public func run(context: CommandContext) async throws {
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let command = self
        try await BusProcess.run(context: context) { stop in
            try command.listen(bus: bus, stop: stop, context: context)
        }
    }

    private func listen(bus: BusAddress, stop: StopToken, context: CommandContext) throws {
        let log = context.logger
        let output = context.standardOutput
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try BusSubscriber(context: zmq, bus: bus)
        defer { subscriber.close() }
        let prefixes = prefixes.isEmpty ? [""] : prefixes
        for prefix in prefixes {
            if !prefix.isEmpty, !prefix.hasSuffix("/") {
                log.warning(
                    "prefix \(prefix.quotedExcerpt()) does not end with '/': it also matches longer names")
            }
            try subscriber.subscribe(text: prefix)
        }
        let shown = prefixes.map { $0.isEmpty ? "everything" : $0 }.joined(separator: ", ")
        if try subscriber.waitForConnection(timeout: .seconds(2)) {
            log.info("listening to \(shown) on \(bus)")
        } else {
            log.info("listening to \(shown) on \(bus) (no broker yet: waiting for it)")
        }

        let clock = ContinuousClock()
        var lastReceived = clock.now
        var printed = 0
        while !stop.isRequested {
            if let count, printed >= count { break }
            if let idle, clock.now - lastReceived >= .seconds(double: idle) {
                log.info("nothing for \(idle) s: exiting")
                break
            }
            guard let delivery = try subscriber.receive(timeout: .milliseconds(100)) else { continue }
            lastReceived = clock.now
            switch delivery {
            case .flatPose: break  // never: this subscriber decodes poses as messages
            case .malformed(let topic, let reason):
                // Every one is counted; the first ten of a reason are shown, then every thousandth.
                let seen = subscriber.decodeErrors[reason.code, default: 0]
                if seen <= 10 || seen % 1000 == 0 {
                    log.warning(
                        "malformed message on \(topic.quotedExcerpt(limit: Topic.maximumLength)): \(reason) (\(seen) of this kind so far)"
                    )
                }
            case .message(let message, let result):
                switch result {
                case .gap(let missed):
                    log.warning(
                        "\(message.topic): \(missed) messages missing before #\(message.header.sequence)")
                case .newStream(restart: true, _):
                    log.notice("\(message.topic): the sender restarted (stream \(message.header.streamID))")
                case .outOfOrder:
                    log.notice("\(message.topic): #\(message.header.sequence) arrived late")
                default: break
                }
                output.write((format == .json ? Self.json(message) : Self.text(message)) + "\n")
                output.flush()
                printed += 1
            }
        }
        output.flush()
        if subscriber.decodeErrorCount > 0 {
            log.warning(
                "\(subscriber.decodeErrorCount) malformed messages: "
                    + subscriber.decodeErrors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    .joined(separator: " "))
        }
    }

    /// One JSON object: `topic`, `stream`, `seq`, then the payload's fields.
    public static func json(_ message: WireMessage) -> String {
        let head =
            "{\"topic\":\"\(message.topic.string)\",\"stream\":\"\(message.header.streamID)\",\"seq\":\(message.header.sequence)"
        let body: String
        switch message.body {
        case .pose(let pose): body = PoseJSONLine.encode(pose)
        case .event(let json), .snapshot(let json): body = json
        case .health(let report):
            body = (try? report.json()).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
        // The payload's strings came from the bus: no control character reaches the terminal.
        return merge(head, body).escapingControlCharactersForJSON
    }

    /// `head` (an unclosed object) followed by the fields of the JSON object `body`.
    static func merge(_ head: String, _ body: String) -> String {
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("{"), trimmed.hasSuffix("}") else {
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
        case .event(let json), .snapshot(let json):
            return head + " " + json
        case .health(let report):
            let counters = report.counters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return head + " \(report.role) pid=\(report.pid) up=\(String(format: "%.1f", report.uptime))s "
                + counters.joined(separator: " ")
        }
    }
}
