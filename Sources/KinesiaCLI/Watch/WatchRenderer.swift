import Foundation
import KinesiaControl
import KinesiaJSON
public import KinesiaMotion
import KinesiaReport
import KinesiaWire

/// Turns a ``WatchState`` into the lines of `kinesia watch`: pure functions of the state, the
/// time and the terminal width, with no I/O.
///
/// The full view (``render(_:now:width:title:)``), one block per session and a table of the
/// processes:
///
/// ```text
/// kinesia watch | 2 sessions | 4 processes | 1532 messages | 0 missed | 0 invalid
///
/// cam0/left                                                       t 12.4 s
///   value     87°   best 142°   reps 3 clean, 1 rejected
///   hold      [##########----------]  50%
///   joints    all in view   confidence 0.82   setup ok
///   last      repRejected 138° keepElbowStraight (t 11.2 s)
///
/// process            role     pid     uptime  counters
/// broker             broker   4242      12 s  messages 3012
/// worker-cam0-left   worker   4250      11 s  poses 1200  events 14  gaps 0
/// ```
///
/// When standard output is not a terminal, `watch` prints ``eventLine(_:t:_:)`` for every
/// event and ``progressLines(_:now:)`` now and then, instead of redrawing.
public enum WatchRenderer {
    /// Counters shown first, in this order; the others follow by name.
    static let preferredCounters = [
        "poses", "events", "snapshots", "sent", "published", "delivered", "received", "gaps", "decodeErrors",
        "dropped", "rejected", "invalid",
        // A camera ingest's detector: frames analysed per second and frames dropped.
        "fpsOut", "framesDropped",
    ]

    /// The counters that say most about a consumer of each role (what it did, and the state of
    /// its output), shown right after the usual ones so that a narrow terminal still shows them.
    static let roleCounters: [String: [String]] = [
        "record": ["stored", "duplicates"],
        "voice": ["spoken", "noSoundOutput", "speechErrors"],
        "haptic": ["played", "deviceReady", "deviceMissing", "lost", "deviceErrors"],
    ]

    // MARK: - The full view

    /// The whole view, each line at most `width` characters.
    /// - Parameters:
    ///   - state: What the watcher knows.
    ///   - now: The watcher's clock, in seconds (the same clock as the state's arrival times).
    ///   - width: The terminal's width in characters (at least 20 is used).
    ///   - title: The first words of the header line.
    /// - Returns: The lines, without line ends.
    public static func render(_ state: WatchState, now: Double, width: Int, title: String = "kinesia watch")
        -> [String]
    {
        let width = max(20, width)
        var lines: [String] = []
        lines.append(
            [
                title, count(state.sessions.count, "session"), count(state.processes.count, "process"),
                count(state.messageCount, "message"), "\(state.missedMessages) missed",
                "\(state.invalidMessages) invalid",
            ].joined(separator: " | "))
        if state.messageCount == 0 {
            lines.append("")
            lines.append("waiting for messages on the bus...")
        }
        for session in state.orderedSessions {
            lines.append("")
            lines += sessionLines(session, now: now, width: width)
        }
        if !state.processes.isEmpty {
            lines.append("")
            lines += processLines(state, now: now)
        }
        if let reason = state.lastInvalidReason {
            lines.append("")
            lines.append("last invalid message: \(reason.escapingControlCharacters)")
        }
        return lines.map { fit($0, width) }
    }

    /// A session's run, in a few words: `run 3, patient p-17`, `run 3 ended (stopped)`.
    static func runLabel(_ record: RunRecord) -> String {
        switch record {
        case .started(let plan): "run \(plan.run)" + (plan.patient.map { ", patient \($0)" } ?? "")
        case .baselineStarted(let run, _, let reps): "run \(run), baseline of \(reps)"
        case .ended(let end): "run \(end.run) ended (\(end.reason.rawValue))"
        }
    }

    /// The block of one session: a title line and its measures.
    /// - Parameters:
    ///   - session: The session.
    ///   - now: The watcher's clock, in seconds.
    ///   - width: The width available (for the title's right column and the hold bar).
    /// - Returns: The lines, not cut to `width`.
    public static func sessionLines(_ session: WatchState.Session, now: Double, width: Int) -> [String] {
        var title =
            session.id.description + (session.run.map { "  " + runLabel($0) } ?? "")
            + (session.baselineReps.map { ", baseline of \($0)" } ?? "")
        var right = session.time.map { "t " + seconds($0) } ?? ""
        let quiet = now - session.lastHeard
        if quiet > WatchState.staleAfter { right += (right.isEmpty ? "" : "  ") + "quiet " + duration(quiet) }
        if !right.isEmpty {
            let gap = max(2, width - title.count - right.count)
            title += String(repeating: " ", count: gap) + right
        }
        var lines = [title]
        guard let snapshot = session.snapshot else {
            lines.append(label("state") + "waiting for a snapshot")
            if let last = session.lastEvent { lines.append(label("last") + describe(last)) }
            return lines
        }
        lines.append(
            label("value") + (snapshot.value.map(degrees) ?? "-").padded(6) + "  best "
                + degrees(snapshot.best).padded(6) + "  reps \(snapshot.repCount) clean, "
                + "\(snapshot.rejectedCount) rejected")
        if let progress = snapshot.holdProgress {
            lines.append(label("hold") + holdBar(progress, width: max(10, min(30, width - 24))))
        }
        var joints = label("joints")
        if snapshot.missingJoints.isEmpty {
            joints += snapshot.isVisible ? "all in view" : "not in view"
        } else {
            joints += "missing " + snapshot.missingJoints.map(\.rawValue).joined(separator: ", ")
        }
        lines.append(joints)
        lines.append(
            label("quality") + "confidence " + (snapshot.confidence.map { number($0, 2) } ?? "-")
                + "   setup " + setup(snapshot.setupIssues))
        if let baseline = snapshot.baseline {
            lines.append(
                label("baseline")
                    + "\(baseline.completed)/\(baseline.target) reps, "
                    + (baseline.value.map(degrees) ?? "-"))
        }
        if let last = session.lastEvent { lines.append(label("last") + describe(last)) }
        if let fault = session.lastFault {
            lines.append(label("fault") + fault.fault.rawValue + " (t " + seconds(fault.t) + ")")
        }
        return lines
    }

    /// The table of processes: a header and one row each, brokers first.
    /// - Parameters:
    ///   - state: What the watcher knows.
    ///   - now: The watcher's clock, in seconds (for uptimes and staleness).
    /// - Returns: The lines, not cut to any width.
    public static func processLines(_ state: WatchState, now: Double) -> [String] {
        let processes = state.orderedProcesses
        // Names and roles come from the bus: escaped before they are measured and shown.
        let names = processes.map(\.report.process.escapingControlCharacters)
        let roles = processes.map(\.report.role.escapingControlCharacters)
        let nameWidth = max(7, names.map(\.count).max() ?? 0)
        let roleWidth = max(4, roles.map(\.count).max() ?? 0)
        var lines = [
            "process".padded(nameWidth) + "  " + "role".padded(roleWidth) + "  " + "pid".padded(7) + "  "
                + "uptime".leftPadded(8) + "  counters"
        ]
        for (index, process) in processes.enumerated() {
            let uptime =
                process.isStale(at: now)
                ? "STALE " + duration(now - process.lastHeard) : duration(process.uptime(at: now))
            lines.append(
                names[index].padded(nameWidth) + "  " + roles[index].padded(roleWidth) + "  "
                    + String(process.report.pid).padded(7) + "  " + uptime.leftPadded(8) + "  "
                    + counters(process.report.counters, role: process.report.role))
        }
        return lines
    }

    /// A hold progress bar: `[##########----------]  50%`.
    /// - Parameters:
    ///   - progress: 0...1 (clamped; not a number counts as 0).
    ///   - width: The number of cells between the brackets.
    public static func holdBar(_ progress: Double, width: Int) -> String {
        let value = progress.isNaN ? 0 : min(1, max(0, progress))
        let cells = max(1, width)
        let filled = Int((value * Double(cells)).rounded(.down))
        let percent = String(format: "%3.0f%%", value * 100)
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled)
            + "] "
            + percent
    }

    /// The counters as `name value` pairs: the usual ones first, then those of the role
    /// (``roleCounters``), then the others by name; dotted details (`decodeErrors.truncated`)
    /// only as part of their total (see ``StatusTable``).
    public static func counters(_ counters: [String: Int], role: String? = nil) -> String {
        let totals = StatusTable.totals(counters)
        return orderedCounterNames(totals.keys, role: role).map {
            "\($0.escapingControlCharacters) \(totals[$0]!)"
        }
        .joined(separator: "  ")
    }

    /// Counter names: the ``preferredCounters`` first, then the role's ``roleCounters``, then
    /// the others in alphabetical order.
    static func orderedCounterNames(_ names: some Sequence<String>, role: String? = nil) -> [String] {
        let leading = preferredCounters + (role.flatMap { roleCounters[$0] } ?? [])
        return names.sorted { lhs, rhs in
            let left = leading.firstIndex(of: lhs) ?? leading.count
            let right = leading.firstIndex(of: rhs) ?? leading.count
            return (left, lhs) < (right, rhs)
        }
    }

    // MARK: - Plain lines (standard output not a terminal)

    /// One line for one event: the session (padded to 12 characters), then the line
    /// `kinesia analyze` prints for it.
    ///
    /// ```text
    /// cam0/left       12.345  repCompleted      peak 142.0  start 10.100  end 12.345
    /// ```
    public static func eventLine(_ session: WatchState.SessionID, t: Double, _ event: MotionEvent) -> String {
        session.description.padded(12) + "  " + TextReport.line(event, at: t)
    }

    /// One line per session and one for the processes: a compact progress report.
    ///
    /// ```text
    /// cam0/left: value 87, best 142.0, 3 clean, 1 rejected, confidence 0.82, setup ok
    /// cam0/analytics: 18 analytics records
    /// processes: broker 12 s, ingest 12 s, worker-left STALE 4 s
    /// ```
    public static func progressLines(_ state: WatchState, now: Double) -> [String] {
        var lines: [String] = []
        for session in state.orderedSessions {
            var parts: [String] = []
            if let snapshot = session.snapshot {
                parts.append("value " + (snapshot.value.map { number($0, 0) } ?? "-"))
                parts.append("best " + number(snapshot.best, 1))
                parts.append("\(snapshot.repCount) clean")
                parts.append("\(snapshot.rejectedCount) rejected")
                if let hold = snapshot.holdProgress { parts.append("hold " + number(hold * 100, 0) + "%") }
                if !snapshot.missingJoints.isEmpty {
                    parts.append("missing " + snapshot.missingJoints.map(\.rawValue).joined(separator: " "))
                }
                parts.append("confidence " + (snapshot.confidence.map { number($0, 2) } ?? "-"))
                parts.append("setup " + setup(snapshot.setupIssues))
            } else if session.analyticsRecordCount == 0 {
                // An analytics session publishes records, not snapshots.
                parts.append("no snapshot yet")
            }
            if session.analyticsRecordCount > 0 {
                parts.append(count(session.analyticsRecordCount, "analytics record"))
            }
            if session.eventCount > 0 || session.analyticsRecordCount == 0 {
                parts.append(count(session.eventCount, "event"))
            }
            if let run = session.run { parts.append(runLabel(run)) }
            lines.append("\(session.id): " + parts.joined(separator: ", "))
        }
        if !state.processes.isEmpty {
            lines.append(
                "processes: "
                    + state.orderedProcesses.map { process in
                        process.report.process.escapingControlCharacters + " "
                            + (process.isStale(at: now)
                                ? "STALE " + duration(now - process.lastHeard)
                                : duration(process.uptime(at: now)))
                    }.joined(separator: ", "))
        }
        if lines.isEmpty { lines.append("waiting for messages on the bus...") }
        return lines
    }

    // MARK: - Summary

    /// The end-of-run summary of every session: clean and rejected reps (with their faults),
    /// the best value and the events received; for an analytics session (records, no events),
    /// the records received by type.
    ///
    /// ```text
    /// cam0/left (shoulderAbduction, left)
    ///   clean reps      4   peaks 151.2, 149.8, 150.3, 152.0
    ///   rejected reps   1   t 18.400 s: keepElbowStraight (peak 139.5)
    ///   best            152.0°
    ///   events          11: 4 repCompleted, 1 repRejected, 1 formFault, 5 visibilityChanged
    /// cam0/analytics
    ///   analytics records 9: 8 repTempo, 1 setSummary
    /// ```
    ///
    /// - Parameters:
    ///   - state: What the watcher collected.
    ///   - labels: An optional description per session (the exercise and side), in parentheses.
    public static func summaryLines(_ state: WatchState, labels: [WatchState.SessionID: String] = [:])
        -> [String]
    {
        var lines: [String] = []
        if state.sessions.isEmpty { return ["no session was heard on the bus"] }
        for session in state.orderedSessions {
            lines.append(session.id.description + (labels[session.id].map { " (\($0))" } ?? ""))
            let isAnalytics = session.analyticsRecordCount > 0 && session.eventCount == 0
            if session.analyticsRecordCount > 0 {
                lines.append(
                    "  analytics records \(session.analyticsRecordCount): "
                        + TextFigures.tally(session.analyticsRecordCounts))
            }
            // An analytics session has no reps, no best value and no events of its own.
            if isAnalytics { continue }
            let clean = session.reps.filter(\.isClean)
            let rejected = session.reps.filter { !$0.isClean }
            var cleanLine = "  clean reps      " + String(session.cleanReps).padded(4)
            if !clean.isEmpty {
                cleanLine += "peaks " + clean.map { number($0.peak, 1) }.joined(separator: ", ")
            }
            lines.append(cleanLine.droppingTrailingSpaces())
            lines.append(
                ("  rejected reps   " + String(session.rejectedReps).padded(4)).droppingTrailingSpaces())
            for rep in rejected {
                lines.append(
                    "    t " + seconds(rep.end) + ": " + rep.faults.map(\.rawValue).joined(separator: ", ")
                        + " (peak " + number(rep.peak, 1) + ")")
            }
            lines.append("  best            " + (session.best.map(degrees1) ?? "-"))
            if let baseline = session.baseline { lines.append("  baseline        " + degrees1(baseline)) }
            var events = "  events          \(session.eventCount)"
            if !session.eventCounts.isEmpty { events += ": " + TextFigures.tally(session.eventCounts) }
            lines.append(events)
        }
        return lines
    }

    // MARK: - Terminal

    /// The bytes that redraw a terminal in place: cursor home, each line followed by "erase to
    /// the end of the line", then "erase below" (no flicker, unlike clearing the whole screen).
    public static func terminalFrame(_ lines: [String]) -> String {
        "\u{1B}[H" + lines.map { $0 + "\u{1B}[K\n" }.joined() + "\u{1B}[J"
    }

    // MARK: - Formatting

    /// `line` cut to `width` characters.
    static func fit(_ line: String, _ width: Int) -> String {
        line.count <= width ? line : String(line.prefix(width))
    }

    static func label(_ name: String) -> String { "  " + name.padded(10) }

    static func count(_ value: Int, _ noun: String) -> String { TextFigures.count(value, noun) }

    static func describe(_ timed: WatchState.TimedEvent) -> String {
        var text = timed.event.name
        switch timed.event {
        case .repCompleted(let rep):
            text += " " + degrees(rep.peak)
        case .repRejected(let rep):
            text += " " + degrees(rep.peak) + " " + rep.faults.map(\.rawValue).joined(separator: ",")
        case .formFault(let fault):
            text += " " + fault.rawValue
        case .visibilityChanged(let visibility):
            text += visibility.isVisible ? " visible" : " not visible"
        case .setupChanged(let issues):
            text += " " + setup(issues)
        case .baselineCompleted(let value):
            text += " " + degrees(value)
        case .holdStarted:
            break
        }
        return text + " (t " + seconds(timed.t) + ")"
    }

    static func setup(_ issues: Set<SetupIssue>) -> String {
        issues.isEmpty ? "ok" : issues.map(\.rawValue).sorted().joined(separator: ", ")
    }

    /// `87°` (whole degrees).
    static func degrees(_ value: Double) -> String { number(value, 0) + "°" }

    /// `87.4°`.
    static func degrees1(_ value: Double) -> String { TextFigures.degrees1(value) }

    /// `12.4 s`.
    static func seconds(_ value: Double) -> String { TextFigures.seconds(value) }

    static func number(_ value: Double, _ decimals: Int) -> String { TextFigures.number(value, decimals) }

    /// `12 s`, `3 m 05 s`, `2 h 03 m`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        guard seconds < 1e9 else { return "long" }
        let whole = Int(seconds)
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) m " + twoDigits(whole % 60) + " s" }
        return "\(whole / 3600) h " + twoDigits(whole / 60 % 60) + " m"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
