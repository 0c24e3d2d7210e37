import KinesiaAnalytics
import KinesiaMotion
import KinesiaReport

/// The summary lines of what the consumers made: the analytics figures, the texts spoken and
/// where the files are. Values in, lines out: no I/O.
public enum DemoSummary {
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
                "  \(key.side) set \(key.set)".padded(16) + TextFigures.count(summary.reps, "rep")
                + ", \(summary.clean) clean"
            line += "; fatigue: peaks " + TextFigures.degrees1(summary.firstPeak) + " to "
            line += TextFigures.degrees1(summary.lastPeak)
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
                line += "; baseline " + TextFigures.degrees1(baseline)
                if let progress = summary.progress { line += ", progress " + signed(progress) + "°" }
            }
            lines.append(line)
        }
        if pairs.isEmpty {
            lines.append("  symmetry".padded(16) + "no left-right pair yet")
        } else {
            let differences = pairs.map(\.peakDifference)
            var line = "  symmetry".padded(16) + TextFigures.count(pairs.count, "pair")
            line += "; left minus right peak " + differences.map { signed($0) + "°" }.joined(separator: ", ")
            line += " (mean " + signed(differences.reduce(0, +) / Double(differences.count)) + "°)"
            let ratios = pairs.compactMap(\.rangeRatio)
            if !ratios.isEmpty {
                line +=
                    "; range ratio mean "
                    + TextFigures.number(ratios.reduce(0, +) / Double(ratios.count), 2)
            }
            lines.append(line)
        }
        return lines
    }

    /// The texts spoken, one line each: file, session, text, and what the cue is about.
    public static func voiceLines(_ utterances: [DemoUtterance], directory: String) -> [String] {
        var lines = [
            "Voice (kinesia voice --output \(directory)): "
                + TextFigures.count(utterances.count, "utterance")
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
    public static func fileLines(
        _ output: DemoOutput, recorded: (events: Int, snapshots: Int, analytics: Int)?,
        report: [(session: String, reps: Int)]?, wavFiles: Int
    ) -> [String] {
        var lines = ["Kept in \(output.directory):"]
        if let report {
            let reps = report.map { "\($0.session) \(TextFigures.count($0.reps, "rep"))" }.joined(
                separator: ", ")
            lines.append(
                "  report.html    kinesia report: \(reps.isEmpty ? "no session" : reps); open file://\(output.report)"
            )
        } else {
            lines.append("  report.html    not written (see above)")
        }
        if let recorded {
            lines.append(
                "  record.sqlite  kinesia record --db: \(TextFigures.count(recorded.events, "event")), "
                    + "\(TextFigures.count(recorded.snapshots, "snapshot")), "
                    + "\(TextFigures.count(recorded.analytics, "analytics record"))")
        } else {
            lines.append("  record.sqlite  not readable (see above)")
        }
        lines.append(
            "  voice/         kinesia voice --output: \(TextFigures.count(wavFiles, "WAV file")) and utterances.jsonl"
        )
        return lines
    }

    /// `+1.2` or `-0.4` (one decimal, with its sign).
    static func signed(_ value: Double) -> String {
        let text = TextFigures.number(value, 1)
        if text == "-0.0" || text == "0.0" { return "0.0" }
        return text.hasPrefix("-") ? text : "+" + text
    }

    /// `25%`.
    static func percent(_ share: Double) -> String { TextFigures.number(share * 100, 0) + "%" }

    private struct SetKey: Hashable {
        var side: String
        var set: Int
    }
}
