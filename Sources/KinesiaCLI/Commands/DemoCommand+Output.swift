import Foundation
import KinesiaAnalytics
import KinesiaJSON
import KinesiaMotion
import KinesiaReport
import KinesiaStore

/// What the demo's consumers leave behind: the recorder's database, the report and the voice's
/// WAV files, all in one directory that outlives the demo.
struct DemoOutput: Hashable, Sendable {
    /// The directory (absolute).
    var directory: String

    /// `kinesia record --db`'s database.
    var database: String { directory + "/record.sqlite" }
    /// The HTML page of `kinesia report`.
    var report: String { directory + "/report.html" }
    /// `kinesia voice --output`'s directory: `0001.wav`... and `utterances.jsonl`.
    var voice: String { directory + "/voice" }

    /// The names in the directory that a demo writes: one of them there means an earlier demo's
    /// output, which a new run would mix with its own (two runs in one database).
    static let names = ["record.sqlite", "report.html", "voice"]

    /// `kinesia-demo-20261201-183015` for `date`, in the local time zone.
    static func defaultName(at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "kinesia-demo-" + formatter.string(from: date)
    }

    /// The output directory for `--out` (`nil`: ``defaultName(at:)``), made absolute against
    /// `currentDirectory`.
    static func resolve(_ out: String?, currentDirectory: String, now: Date) -> DemoOutput {
        let path = out ?? defaultName(at: now)
        let absolute = path.hasPrefix("/") ? path : currentDirectory + "/" + path
        return DemoOutput(directory: URL(fileURLWithPath: absolute).standardized.path)
    }

    /// Makes the directory (and its parents).
    /// - Throws: ``CLIError/failure(_:)`` when it cannot be made, is not a directory, or
    ///   already holds a demo's output.
    func prepare() throws(CLIError) {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        if files.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CLIError.failure("--out \(directory) is not a directory")
            }
            let present = Self.names.filter { files.fileExists(atPath: directory + "/" + $0) }
            guard present.isEmpty else {
                throw CLIError.failure(
                    "\(directory) already holds a demo's output (\(present.joined(separator: ", "))): "
                        + "give another --out DIR")
            }
        } else {
            do {
                try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw CLIError.failure(
                    "cannot make the output directory \(directory): \(error.localizedDescription)")
            }
        }
        guard files.isWritableFile(atPath: directory) else {
            throw CLIError.failure("the output directory \(directory) is not writable")
        }
    }
}

/// One line of `utterances.jsonl`: what `kinesia voice --output` said, and in which file.
struct DemoUtterance: Hashable, Sendable {
    /// The WAV file's name in the voice directory (`0001.wav`).
    var file: String
    /// The text spoken.
    var text: String
    /// What the cue is about (`repCounted`, `formFault.keepTrunkUpright`...).
    var cue: String
    /// The session it came from (`left`).
    var session: String

    /// The utterances of an `utterances.jsonl` text, in order; a line that is not an utterance
    /// (a torn last line of a voice that was killed) is left out.
    static func parse(jsonLines text: String) -> [DemoUtterance] {
        text.split(separator: "\n").compactMap { line in
            guard case .object(let fields)? = try? JSONParser.parse(line),
                case .string(let file)? = fields["file"], case .string(let text)? = fields["text"],
                case .string(let cue)? = fields["cue"], case .string(let session)? = fields["session"]
            else { return nil }
            return DemoUtterance(file: file, text: text, cue: cue, session: session)
        }
    }
}

/// The summary lines of what the consumers made: the analytics figures, the texts spoken and
/// where the files are. Values in, lines out: no I/O.
enum DemoSummary {
    /// The analytics session's figures: each side's latest figures per set (reps, clean, the
    /// fatigue trend of the peaks, the rejected reps by fault, the baseline and the progress
    /// against it), then the left-right symmetry of the pairs.
    static func analyticsLines(_ records: [AnalyticsRecord], session: String) -> [String] {
        var lines = ["Analytics (\(session)):"]
        var latest: [SetKey: SetSummary] = [:]
        var order: [SetKey] = []
        var pairs: [RepSymmetry] = []
        for record in records {
            switch record {
            case .setSummary(let summary):
                let key = SetKey(side: summary.side.rawValue, set: summary.set)
                if latest[key] == nil { order.append(key) }
                latest[key] = summary
            case .repSymmetry(let pair):
                pairs.append(pair)
            case .repTempo:
                break
            }
        }
        guard !order.isEmpty || !pairs.isEmpty else { return lines + ["  no analytics record was recorded"] }
        for key in order.sorted(by: { ($0.set, $0.side) < ($1.set, $1.side) }) {
            guard let summary = latest[key] else { continue }
            var line =
                "  \(key.side) set \(key.set)".padded(16) + WatchRenderer.count(summary.reps, "rep")
                + ", \(summary.clean) clean"
            line += "; fatigue: peaks " + WatchRenderer.degrees1(summary.firstPeak) + " to "
            line += WatchRenderer.degrees1(summary.lastPeak)
            line += ", trend " + (summary.peakSlope.map { signed($0) + "°/rep" } ?? "-")
            if summary.rejected > 0 {
                let faults = summary.rejectedByFault.sorted {
                    ($1.value, $0.key.rawValue) < ($0.value, $1.key.rawValue)
                }
                line += "; rejected " + percent(summary.rejectedShare)
                if !faults.isEmpty {
                    line +=
                        " (" + faults.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ") + ")"
                }
            }
            if let baseline = summary.baseline {
                line += "; baseline " + WatchRenderer.degrees1(baseline)
                if let progress = summary.progress { line += ", progress " + signed(progress) + "°" }
            }
            lines.append(line)
        }
        if pairs.isEmpty {
            lines.append("  symmetry".padded(16) + "no left-right pair yet")
        } else {
            let differences = pairs.map(\.peakDifference)
            var line = "  symmetry".padded(16) + WatchRenderer.count(pairs.count, "pair")
            line += "; left minus right peak " + differences.map { signed($0) + "°" }.joined(separator: ", ")
            line += " (mean " + signed(differences.reduce(0, +) / Double(differences.count)) + "°)"
            let ratios = pairs.compactMap(\.rangeRatio)
            if !ratios.isEmpty {
                line +=
                    "; range ratio mean "
                    + WatchRenderer.number(ratios.reduce(0, +) / Double(ratios.count), 2)
            }
            lines.append(line)
        }
        return lines
    }

    /// The texts spoken, one line each: file, session, text, and what the cue is about.
    static func voiceLines(_ utterances: [DemoUtterance], directory: String) -> [String] {
        var lines = [
            "Voice (kinesia voice --output \(directory)): "
                + WatchRenderer.count(utterances.count, "utterance")
        ]
        for utterance in utterances {
            lines.append(
                "  " + utterance.file.padded(10) + utterance.session.padded(7) + "\"" + utterance.text
                    + "\" ("
                    + utterance.cue + ")")
        }
        return lines
    }

    /// Where the files are, and what each holds.
    static func fileLines(
        _ output: DemoOutput, recorded: (events: Int, snapshots: Int, analytics: Int)?,
        report: [(session: String, reps: Int)]?, wavFiles: Int
    ) -> [String] {
        var lines = ["Kept in \(output.directory):"]
        if let report {
            let reps = report.map { "\($0.session) \(WatchRenderer.count($0.reps, "rep"))" }.joined(
                separator: ", ")
            lines.append(
                "  report.html    kinesia report: \(reps.isEmpty ? "no session" : reps); open file://\(output.report)"
            )
        } else {
            lines.append("  report.html    not written (see above)")
        }
        if let recorded {
            lines.append(
                "  record.sqlite  kinesia record --db: \(WatchRenderer.count(recorded.events, "event")), "
                    + "\(WatchRenderer.count(recorded.snapshots, "snapshot")), "
                    + "\(WatchRenderer.count(recorded.analytics, "analytics record"))")
        } else {
            lines.append("  record.sqlite  not readable (see above)")
        }
        lines.append(
            "  voice/         kinesia voice --output: \(WatchRenderer.count(wavFiles, "WAV file")) and utterances.jsonl"
        )
        return lines
    }

    /// `+1.2` or `-0.4` (one decimal, with its sign).
    static func signed(_ value: Double) -> String {
        let text = WatchRenderer.number(value, 1)
        if text == "-0.0" || text == "0.0" { return "0.0" }
        return text.hasPrefix("-") ? text : "+" + text
    }

    /// `25%`.
    static func percent(_ share: Double) -> String { WatchRenderer.number(share * 100, 0) + "%" }

    private struct SetKey: Hashable {
        var side: String
        var set: Int
    }
}
