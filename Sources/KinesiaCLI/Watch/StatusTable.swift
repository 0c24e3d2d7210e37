public import KinesiaWire

/// The table `kinesia status` prints: one row per live process, from its latest health report.
///
/// ```text
/// process           role    pid    uptime  poses  events  gaps  decodeErrors  dropped
/// broker            broker  4242     12 s      -       -     -             -        -
/// ingest-cam0       ingest  4260     11 s   3600       -     -             -        -
/// worker-cam0-left  worker  4250     11 s   3600      14     0             0        2
/// ```
///
/// Rows: brokers, ingests, workers, then the others, by name within a role. Columns: the
/// process's name, role, pid and uptime, then one column per counter any process reports, the
/// usual ones first (``WatchRenderer/preferredCounters``), then by name. Counters with a dotted
/// name (`dropped.nonFinite`, `dropped.backwards`) are summed into one column named after their
/// first part (`dropped`), so that the table keeps a readable width; `-` marks a counter a
/// process does not report. Numbers are right-aligned. Pure: no I/O, tested directly.
public enum StatusTable {
    /// The table's lines (header first), without line ends.
    /// - Parameter reports: The latest report of each process (one per process name; when a
    ///   name appears twice, the report with the longer uptime wins).
    public static func render(_ reports: [HealthReport]) -> [String] {
        var latest: [String: HealthReport] = [:]
        for report in reports {
            if let existing = latest[report.process], existing.uptime > report.uptime { continue }
            latest[report.process] = report
        }
        let rows = latest.values.sorted {
            (WatchState.roleRank($0.role), $0.process) < (WatchState.roleRank($1.role), $1.process)
        }
        let grouped = rows.map { groupedCounters($0.counters) }
        let counterNames = WatchRenderer.orderedCounterNames(Set(grouped.flatMap(\.keys)))

        var table: [[String]] = [["process", "role", "pid", "uptime"] + counterNames]
        for (report, counters) in zip(rows, grouped) {
            table.append(
                [report.process, report.role, String(report.pid), WatchRenderer.duration(report.uptime)]
                    + counterNames.map { counters[$0].map(String.init) ?? "-" })
        }
        let widths = (0..<table[0].count).map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.enumerated().map { index, row in
            row.enumerated().map { column, cell in
                // Names and roles on the left; numbers (and their headers) on the right.
                column < 2 ? cell.padded(widths[column]) : cell.leftPadded(widths[column])
            }.joined(separator: "  ").droppingTrailingSpaces()
        }
    }

    /// Counters with dotted names summed into their first part: `dropped.nonFinite` 2 and
    /// `dropped.backwards` 1 give `dropped` 3. Sums saturate instead of overflowing.
    static func groupedCounters(_ counters: [String: Int]) -> [String: Int] {
        var grouped: [String: Int] = [:]
        for (name, value) in counters {
            let group = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name
            let (sum, overflow) = grouped[group, default: 0].addingReportingOverflow(value)
            grouped[group] = overflow ? (value > 0 ? Int.max : Int.min) : sum
        }
        return grouped
    }
}
