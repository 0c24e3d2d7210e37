import Foundation
import KinesiaBus
public import KinesiaClient
import KinesiaJSON
public import KinesiaListen
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
/// one JSON object or has a field of the line's own (``ListenLine/json(_:)``). Gaps and sender restarts
/// are warned about on standard error; malformed messages are reported there and counted, never
/// fatal.
///
/// ```text
/// $ kinesia listen event/ --format json --count 1
/// {"topic":"event/cam0/left/","stream":"9f3c2a51d04e7b18","seq":0,"type":"visibilityChanged",...}
/// ```
public struct ListenCommand: ParsableCommand {
    /// The output format.
    public typealias Format = ListenLine.Format

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
            case (.some(let kind), 2)
            where (kind == .event || kind == .snapshot || kind == .session) && parts[1].isEmpty:
                prefix = .kind(kind)
            case (.some(.session), 3) where parts[2].isEmpty: prefix = try? .runs(camera: parts[1])
            case (.some(.session), 4) where parts[3].isEmpty:
                prefix = (try? Topic.session(camera: parts[1], session: parts[2]))?.prefix
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
                    "with --from, give event, snapshot or session prefixes of whole names (event/, event/cam0/, "
                        + "event/cam0/left/, session/cam0/left/), got \(text.quotedExcerpt())")
            }
            result.append(prefix)
        }
        return result
    }

    /// Prints messages until `--count`, `--idle` or a signal (``ListenService``).
    public func run(context: CommandContext) async throws {
        let (bus, _) = try BusProcess.bus(bus, security: security, role: .consumer, context: context)
        let mode: ListenService<ContinuousClock>.Mode =
            if let start = try replayStart() {
                .exactlyOnce(topics: try exactlyOncePrefixes(), start: start, from: from ?? "")
            } else {
                .live(prefixes: prefixes)
            }
        let service = ListenService(
            configuration: .init(
                bus: bus, mode: mode, format: format, count: count, idle: idle.map { .seconds(double: $0) }),
            logger: context.logger, output: context.standardOutput)
        try await BusProcess.run(context: context, thread: "listen") { stop in try service.run(until: stop) }
    }
}

extension ListenLine.Format: ExpressibleByArgument {}
