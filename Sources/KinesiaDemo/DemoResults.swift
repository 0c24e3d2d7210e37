import Foundation
import KinesiaControl
import KinesiaMotion
import KinesiaReport
public import KinesiaService
import KinesiaStore

/// What a demo's consumers left in its output directory, read back once they have stopped:
/// the database's runs as summary lines, the report written from it (what `kinesia report
/// --run` shows), and the voice's utterances and WAV files.
public enum DemoResults {
    /// What the consumers left in the output directory.
    public struct Consumers: Sendable {
        /// The database's row counts; `nil` when it cannot be read.
        public var recorded: (events: Int, snapshots: Int, analytics: Int)?
        /// Each run's summary lines (its reps and events, or its analytics), in run order.
        public var runs: [String] = []
        /// The report's sessions and their judged reps; `nil` when it was not written.
        public var report: [(session: String, reps: Int)]?
        /// The utterances of `utterances.jsonl`.
        public var utterances: [DemoUtterance] = []
        /// The WAV files in the voice directory.
        public var wavFiles = 0
    }

    /// Reads the database back, writes the report from it (what `kinesia report --db DB
    /// --camera cam0 --out report.html` does) and reads the voice's utterances.
    public static func read(_ output: DemoOutput, log: Logger) -> Consumers {
        var consumers = Consumers()
        do {
            let store = try RecordStore(path: output.database)
            defer { try? store.close() }
            consumers.recorded = (
                try store.count("events"), try store.count("snapshots"), try store.count("analytics")
            )
            consumers.runs = try Self.runLines(store)
            do {
                // The runs of both sides, one after the other: what `kinesia report --run` shows.
                var runs: [UInt64] = []
                for row in try store.runRows() {
                    if case .started(let plan)? = try? RunRecord(json: row.json), plan.analysis != .analytics
                    {
                        runs.append(plan.run)
                    }
                }
                let report = try RecordedReport.runs(runs, patient: nil, in: store)
                try Data(ReportPage.render(report).utf8).write(
                    to: URL(fileURLWithPath: output.report), options: .atomic)
                consumers.report = report.sessions.map { ($0.name, $0.reps.count) }
            } catch {
                log.error("cannot write the report \(output.report): \(error)")
            }
        } catch {
            log.error("cannot read the database \(output.database): \(error)")
        }
        let utterances =
            (try? String(contentsOfFile: output.voice + "/utterances.jsonl", encoding: .utf8)) ?? ""
        consumers.utterances = DemoUtterance.parse(jsonLines: utterances)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: output.voice)) ?? []
        consumers.wavFiles = files.filter { $0.hasSuffix(".wav") }.count
        return consumers
    }

    /// Each run's block, in run order: a side's reps and events (from its run's end and the
    /// events recorded on its stream), or the analytics run's figures.
    static func runLines(_ store: RecordStore) throws -> [String] {
        var lines: [String] = []
        var byRun:
            [UInt64: [(streamID: UInt64, camera: String, session: String, json: String, recordedAt: String?)]] =
                [:]
        var order: [UInt64] = []
        for row in try store.runRows() {
            guard let run = try? RunRecord(json: row.json).run else { continue }
            if byRun[run] == nil { order.append(run) }
            byRun[run, default: []].append(row)
        }
        if order.isEmpty { return ["no run was recorded"] }
        for run in order {
            guard let rows = byRun[run], let first = rows.first else { continue }
            let records = rows.compactMap { try? RunRecord(json: $0.json) }
            guard case .started(let plan)? = records.first else { continue }
            let who = "run \(run), patient \(plan.patient ?? "-")"
            if plan.analysis == .analytics {
                let records = try store.analytics(
                    camera: first.camera, session: first.session, streamID: first.streamID)
                lines += DemoSummary.analyticsLines(records, session: "\(plan.key), \(who)")
                continue
            }
            lines.append("\(plan.key), \(who) (\(plan.exercise.id), \(plan.analysis.rawValue) side)")
            let events = try store.eventLines(
                camera: first.camera, session: first.session, streamID: first.streamID
            )
            .compactMap { try? MotionJSON.decodeEvent($0) }
            var reps: [Rep] = []
            var kinds: [String: Int] = [:]
            for (_, event) in events {
                kinds[event.name, default: 0] += 1
                if case .repCompleted(let rep) = event { reps.append(rep) }
                if case .repRejected(let rep) = event { reps.append(rep) }
            }
            let clean = reps.filter(\.isClean)
            var cleanLine = "  clean reps      " + String(clean.count).padded(4)
            if !clean.isEmpty {
                cleanLine += "peaks " + clean.map { TextFigures.number($0.peak, 1) }.joined(separator: ", ")
            }
            lines.append(cleanLine.droppingTrailingSpaces())
            let rejected = reps.filter { !$0.isClean }
            lines.append(("  rejected reps   " + String(rejected.count).padded(4)).droppingTrailingSpaces())
            for rep in rejected {
                lines.append(
                    "    t " + TextFigures.seconds(rep.end) + ": "
                        + rep.faults.map(\.rawValue).joined(separator: ", ")
                        + " (peak " + TextFigures.number(rep.peak, 1) + ")")
            }
            var best = "-"
            if case .ended(let end)? = records.last { best = TextFigures.degrees1(end.best) }
            lines.append("  best            " + best)
            var eventsLine = "  events          \(events.count)"
            if !kinds.isEmpty { eventsLine += ": " + TextFigures.tally(kinds) }
            lines.append(eventsLine)
        }
        return lines
    }
}
