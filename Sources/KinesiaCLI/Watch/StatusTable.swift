import KinesiaJSON
import KinesiaMotion
import KinesiaReport
public import KinesiaWire

/// The table `kinesia status` prints: one row per live process, from its latest health report.
///
/// ```text
/// process           role    pid   uptime  poses  events  published  gaps  decodeErrors  other
/// broker            broker  4242    12 s      -       -       9000     -             -  subscriptions 3
/// ingest-cam0       ingest  4260    11 s      -       -          -     -             -  paused 0  sent 3600
/// worker-cam0-left  worker  4250    11 s   3600      14          -     0             0  sessions 1
/// ```
///
/// Rows: brokers, ingests, workers, then the others, by name within a role. Columns: the
/// process's name, role, pid and uptime; then the usual counters
/// (``WatchRenderer/preferredCounters``: poses, events, gaps, decode errors...) that any
/// process reports, one column each, `-` where a process does not report it; then `other`, the
/// remaining counters of each process as `name value`, those that say most about its role first
/// (``WatchRenderer/roleCounters``: `stored`, `spoken`, `played`, `deviceMissing`...). Detail counters with a dotted name
/// (`decodeErrors.truncated`) are left out when their total (`decodeErrors`) is reported, and
/// summed into it otherwise. Numbers are right-aligned. Names come from the bus: their control
/// characters are escaped. Pure: no I/O, tested directly.
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
        let grouped = rows.map { totals($0.counters) }
        let reported = Set(grouped.flatMap(\.keys))
        let columns = WatchRenderer.preferredCounters.filter(reported.contains)
        let others = zip(rows, grouped).map { report, counters in
            WatchRenderer.orderedCounterNames(
                counters.keys.filter { !columns.contains($0) }, role: report.role
            )
            .map { "\($0.escapingControlCharacters) \(counters[$0]!)" }.joined(separator: "  ")
        }
        let hasOthers = others.contains { !$0.isEmpty }

        var table: [[String]] = [
            ["process", "role", "pid", "uptime"] + columns + (hasOthers ? ["other"] : [])
        ]
        for (index, report) in rows.enumerated() {
            table.append(
                [
                    report.process.escapingControlCharacters, report.role.escapingControlCharacters,
                    String(report.pid), WatchRenderer.duration(report.uptime),
                ]
                    + columns.map { grouped[index][$0].map(String.init) ?? "-" }
                    + (hasOthers ? [others[index]] : []))
        }
        let last = table[0].count - 1
        let widths = (0...last).map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.map { row in
            row.enumerated().map { column, cell in
                // Names, roles and the other counters on the left; numbers (and their headers)
                // on the right.
                column < 2 || (hasOthers && column == last)
                    ? cell.padded(widths[column]) : cell.leftPadded(widths[column])
            }.joined(separator: "  ").droppingTrailingSpaces()
        }
    }

    /// The totals of a process's counters: undotted counters as they are; a dotted detail
    /// (`dropped.nonFinite`) only counts, summed into its first part (`dropped`), when that
    /// total is not reported itself. Sums saturate instead of overflowing.
    static func totals(_ counters: [String: Int]) -> [String: Int] {
        HealthReport.totals(counters)
    }
}
