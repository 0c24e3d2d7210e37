import Foundation
import KinesiaBus
public import KinesiaClient
import KinesiaJSON
import KinesiaMotion
import KinesiaService
import KinesiaSystem
public import KinesiaWire

/// `kinesia listen [TOPIC-PREFIX...]`: prints the messages of the bus.
///
/// Text (the default) prints one readable line per message; `--format json` prints one JSON
/// object per message: `topic`, `stream`, `seq`, then the payload's fields (a pose in the
/// recordings' form `t`, `w`, `h`, `points`, `confidence`; an event, a snapshot or a health
/// report with its own JSON fields), or the payload as a string under `payload` when it is not
/// one JSON object or has a field of the line's own (``json(_:)``). Gaps and sender restarts
/// are warned about on standard error; malformed messages are reported there and counted, never
/// fatal.
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
            one object per line: topic, stream, seq, then the payload's fields (a payload that is \
            not one JSON object, or has a topic, stream or seq field, as a string under payload). \
            Gaps, sender restarts and malformed messages are reported on standard error. With \
            --from, every event of the sessions followed (default prefix event/) is printed \
            exactly once and in order per session: what was missed (a late start, a slow \
            terminal, a lost message) is fetched from the worker's replay endpoint; what cannot \
            be had any more is reported on standard error.
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
            .option(
                "from", \.from, valueName: "beginning|now|n",
                help:
                    "Exactly once, in order per session: start at each stream's beginning, now, or sequence N."
            ),
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
    /// `--from`.
    public var from: String?

    /// A command with every default.
    public init() {}

    /// Checks `--count` and `--idle`.
    public func validate() throws(CLIError) {
        if let count, count < 1 { throw CLIError.usage("--count must be at least 1, got \(count)") }
        if let idle, idle <= 0 { throw CLIError.usage("--idle must be positive, got \(idle)") }
        _ = try replayStart()
        if from != nil { _ = try exactlyOncePrefixes() }
    }

    /// `--from` as a ``ReplayStart`` (`nil` without `--from`).
    /// - Throws: ``CLIError/usage(_:)`` for anything but `beginning`, `now` or a sequence number.
    public func replayStart() throws(CLIError) -> ReplayStart? {
        guard let from else { return nil }
        switch from {
        case "beginning": return .beginning
        case "now": return .now
        default:
            guard let sequence = UInt64(from) else {
                throw CLIError.usage(
                    "--from takes beginning, now or a sequence number, got \(from.quotedExcerpt())")
            }
            return .sequence(sequence)
        }
    }

    /// The prefixes followed exactly once: whole topic components of events or snapshots
    /// (`event/`, `event/cam0/`, `event/cam0/left/`); `event/` when none is given.
    /// - Throws: ``CLIError/usage(_:)`` for another prefix.
    public func exactlyOncePrefixes() throws(CLIError) -> [TopicPrefix] {
        guard !prefixes.isEmpty else { return [.kind(.event)] }
        var result: [TopicPrefix] = []
        for text in prefixes {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let kind = parts.first.flatMap { Topic.Kind(rawValue: $0) }
            let prefix: TopicPrefix?
            switch (kind, parts.count) {
            case (.some(let kind), 2) where (kind == .event || kind == .snapshot) && parts[1].isEmpty:
                prefix = .kind(kind)
            case (.some(.event), 3) where parts[2].isEmpty: prefix = try? .events(camera: parts[1])
            case (.some(.snapshot), 3) where parts[2].isEmpty: prefix = try? .snapshots(camera: parts[1])
            case (.some(.event), 4) where parts[3].isEmpty:
                prefix = (try? Topic.event(camera: parts[1], session: parts[2]))?.prefix
            case (.some(.snapshot), 4) where parts[3].isEmpty:
                prefix = (try? Topic.snapshot(camera: parts[1], session: parts[2]))?.prefix
            default: prefix = nil
            }
            guard let prefix else {
                throw CLIError.usage(
                    "with --from, give event or snapshot prefixes of whole names (event/, event/cam0/, "
                        + "event/cam0/left/), got \(text.quotedExcerpt())")
            }
            result.append(prefix)
        }
        return result
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
        if let start = try replayStart() {
            try listenExactlyOnce(bus: bus, start: start, stop: stop, context: context)
            return
        }
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
        var warnings = WarningThrottle()
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
                    if let line = warnings.admit(
                        "gap",
                        "\(message.topic): \(missed) messages missing before #\(message.header.sequence)")
                    {
                        log.warning(line)
                    }
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
        if warnings.hidden > 0 {
            log.warning("warnings given: \(warnings.summary) (\(warnings.hidden) not shown)")
        }
        if subscriber.decodeErrorCount > 0 {
            log.warning(
                "\(subscriber.decodeErrorCount) malformed messages: "
                    + subscriber.decodeErrors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    .joined(separator: " "))
        }
    }

    private func listenExactlyOnce(
        bus: BusAddress, start: ReplayStart, stop: StopToken, context: CommandContext
    ) throws {
        let log = context.logger
        let output = context.standardOutput
        let topics = try exactlyOncePrefixes()
        let zmq = try ZMQContext()
        defer { zmq.terminate() }
        let subscriber = try ExactlyOnceSubscriber(context: zmq, bus: bus, topics: topics, from: start)
        defer { subscriber.close() }
        log.info(
            "listening to \(topics.map(\.string).joined(separator: ", ")) exactly once from \(from ?? "") on \(bus)"
        )
        let clock = ContinuousClock()
        var lastReceived = clock.now
        var printed = 0
        // A hostile or broken sender can make every delivery a warning: each is counted, the
        // first ten of a reason are shown, then every thousandth.
        var warnings = WarningThrottle()
        while !stop.isRequested {
            if let count, printed >= count { break }
            if let idle, clock.now - lastReceived >= .seconds(double: idle) {
                log.info("nothing for \(idle) s: exiting")
                break
            }
            guard let delivery = try subscriber.receive(timeout: .milliseconds(100)) else { continue }
            for line in Self.warnings(for: delivery, into: &warnings) { log.warning(line) }
            switch delivery {
            case .message(let message), .health(let message):
                lastReceived = clock.now
                output.write((format == .json ? Self.json(message) : Self.text(message)) + "\n")
                output.flush()
                printed += 1
            case .lost, .malformed:
                break  // warned above
            }
        }
        output.flush()
        let counters = subscriber.machine.counters
        if !counters.isEmpty {
            log.info(
                counters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
        if !warnings.counts.isEmpty {
            log.info("warnings given: \(warnings.summary) (\(warnings.hidden) not shown)")
        }
    }

    /// The warning lines of one exactly-once delivery that are to be shown: events that cannot be
    /// had any more (reason `lost`) and malformed messages (reason `malformed.<code>`), each
    /// counted in `warnings` and throttled there.
    static func warnings(
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
        case .event(let json), .snapshot(let json): body = json
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
        case .event(let json), .snapshot(let json):
            return head + " " + json
        case .health(let report):
            let counters = report.counters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return head + " \(report.role) pid=\(report.pid) up=\(String(format: "%.1f", report.uptime))s "
                + counters.joined(separator: " ")
        }
    }
}
