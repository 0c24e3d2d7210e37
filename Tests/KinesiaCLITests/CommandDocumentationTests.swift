import Foundation
import KinesiaIngest
import KinesiaMotion
import Testing

@testable import KinesiaCLI

/// What `--help` and docs/bus-commands.md say about every command's arguments, checked against
/// the commands themselves (their `arguments` lists, through `Kinesia.commands`).
struct CommandDocumentationTests {
    /// One option or flag of one command, with what help shows as its default.
    struct Documented: Sendable, CustomTestStringConvertible {
        var command: String
        var flag: String
        var shownDefault: String?
        /// The default shown after parsing `--flag <shown default>` into a fresh command: equal
        /// to ``shownDefault`` when the shown text reads back as the real default.
        var defaultAfterReparsing: String?
        var helpText: String
        var testDescription: String { "\(command) \(flag)" }
    }

    static func documented<Command: ParsableCommand>(_ type: Command.Type) -> [Documented] {
        let defaults = Command()
        return Command.arguments.filter { $0.kind != .positional }.map { argument in
            let shown = argument.defaultDescription(in: defaults)
            var reparsed: String?
            if let shown {
                var command = Command()
                if (try? argument.store(&command, shown)) != nil {
                    reparsed = argument.defaultDescription(in: command)
                }
            }
            return Documented(
                command: Command.configuration.name, flag: "--\(argument.name)", shownDefault: shown,
                defaultAfterReparsing: reparsed, helpText: Command.helpText)
        }
    }

    static let everyFlag: [Documented] = Kinesia.commands.flatMap { documented($0) }

    static let busCommandsDoc: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return (try? String(contentsOf: url.appendingPathComponent("docs/bus-commands.md"), encoding: .utf8))
            ?? ""
    }()

    @Test(arguments: everyFlag)
    func helpShowsTheRealDefaultOfEveryOption(_ flag: Documented) {
        guard let shown = flag.shownDefault else { return }
        #expect(flag.helpText.contains("(default: \(shown))"))
        #expect(flag.defaultAfterReparsing == shown, "\(shown) does not read back as the default")
    }

    @Test func theShownDefaultsAreTheCommandsValues() {
        func shown(_ command: String, _ flag: String) -> String? {
            Self.everyFlag.first { $0.command == command && $0.flag == flag }?.shownDefault
        }
        #expect(shown("worker", "--snapshot-rate") == String(Int(WorkerCommand().snapshotRate)))
        #expect(shown("status", "--wait") == "1.5" && StatusCommand().wait == 1.5)
        #expect(shown("demo", "--exercise") == DemoCommand().exercise.id)
        #expect(shown("ingest", "--pace") == IngestCommand().pace.rawValue)
        #expect(shown("broker", "--hwm") == String(BrokerCommand().highWaterMark))
        // Required and optional options show none.
        #expect(shown("ingest", "--camera") == nil && shown("listen", "--count") == nil)
    }

    @Test func everyCommandHasASectionInTheCommandsDoc() {
        for command in Kinesia.commands {
            #expect(
                Self.busCommandsDoc.contains("## `kinesia \(command.configuration.name)"),
                "docs/bus-commands.md has no section for \(command.configuration.name)")
        }
    }

    /// The doc's `## ` section whose heading starts with `start`.
    static func section(startingWith start: String) -> Substring {
        for section in busCommandsDoc.split(separator: "\n## ") where section.hasPrefix(start) {
            return section
        }
        return ""
    }

    /// Whether `text` names `flag` as a whole word (`--wait` is not in `--wait-seconds`).
    static func mentions(_ text: Substring, _ flag: String) -> Bool {
        var rest = text[...]
        while let range = rest.range(of: flag) {
            let next = rest[range.upperBound...].first
            if next.map({ !$0.isLetter && $0 != "-" }) ?? true { return true }
            rest = rest[range.upperBound...]
        }
        return false
    }

    @Test(arguments: everyFlag)
    func everyFlagOfEveryCommandIsInItsSectionOfTheCommandsDoc(_ flag: Documented) {
        let own = Self.section(startingWith: "`kinesia \(flag.command)")
        let shared = Self.section(startingWith: "The bus address (every command)")
        #expect(!own.isEmpty, "docs/bus-commands.md has no section for \(flag.command)")
        #expect(
            Self.mentions(own, flag.flag) || Self.mentions(shared, flag.flag),
            "docs/bus-commands.md does not mention \(flag.flag) of \(flag.command)")
    }
}
