import Foundation
import KinesiaAnalytics
import KinesiaControl
import KinesiaJSON
import KinesiaMotion
import KinesiaReport
import KinesiaService
import KinesiaStore
import KinesiaWire

/// `kinesia report --db FILE --camera ID [--session NAME...] --out report.html`: one
/// self-contained HTML page of a camera's (a patient's) recorded sessions.
///
/// It reads what `kinesia record` stored: each session's snapshots (the measured angle over
/// time), its events (reps, faults, the baseline), and the analytics records of the camera, and
/// writes ``ReportPage/render(_:)``'s page: no script, no network, inline SVG, the same bytes for
/// the same database.
public struct ReportCommand: ParsableCommand {
    /// `report`, with its help.
    public static let configuration = CommandConfiguration(
        name: "report", summary: "Write a self-contained HTML report of a camera's recorded sessions.",
        discussion: """
            Reads a database written by kinesia record, read only (it never changes the file, \
            and reads one on read-only media). The page shows, for each session of the \
            camera (every one, or those given with --session), the measured angle over time with \
            each rep, fault and the baseline marked (the session's own, else for a session named \
            left or right that side's baseline from the analytics), and the reps as a table; then the left \
            session against the right one, and the analytics (tempo, symmetry, sets) of any \
            analytics session. One file, no script and no network request: open it in any \
            browser, attach it to a patient's record. The same database gives the same bytes.
            """)

    /// The options.
    public static var arguments: [Argument<ReportCommand>] {
        [
            .option(
                "db", \.database, valueName: "file", required: true, help: "The database of kinesia record."),
            .option(
                "camera", \.camera, valueName: "id",
                help: "The camera (the patient); needed when the database has several."),
            .option(
                "session", \.sessions, valueName: "name",
                help: "A session to show (default: every session of the camera)."),
            .option(
                "run", \.run, valueName: "id",
                help: "Show this run only (its exercise, side, patient, thresholds)."),
            .option(
                "patient", \.patient, valueName: "ref", help: "Show every run of this patient, in order."),
            .option("out", \.output, valueName: "file", required: true, help: "The HTML file to write."),
        ]
    }

    /// `--db`.
    public var database: String?
    /// `--camera`.
    public var camera: String?
    /// `--session` values.
    public var sessions: [String] = []
    /// `--out`.
    public var output: String?
    /// `--run`.
    public var run: Int?
    /// `--patient`.
    public var patient: String?

    /// A command with every default.
    public init() {}

    /// Checks the names.
    public func validate() throws(CLIError) {
        guard database?.isEmpty == false, output?.isEmpty == false else {
            throw CLIError.usage("give --db and --out")
        }
        if let camera, !Topic.isValidName(camera) {
            throw CLIError.usage(Topic.invalidNameMessage(camera, role: "camera"))
        }
        for session in sessions where !Topic.isValidName(session) {
            throw CLIError.usage(Topic.invalidNameMessage(session, role: "session"))
        }
        if run != nil || patient != nil {
            guard camera == nil, sessions.isEmpty else {
                throw CLIError.usage("--run and --patient choose the sessions: give no --camera or --session")
            }
            guard run == nil || patient == nil else {
                throw CLIError.usage("give --run or --patient, not both")
            }
            if let run, run < 1 { throw CLIError.usage("--run takes a run number (1, 2, 3...)") }
            if let patient, !Topic.isValidName(patient) {
                throw CLIError.usage(Topic.invalidNameMessage(patient, role: "patient reference"))
            }
        }
    }

    /// Writes the page.
    public func run(context: CommandContext) async throws {
        let database = database ?? ""
        let output = output ?? ""
        guard FileManager.default.fileExists(atPath: database) else {
            throw CLIError.failure("kinesia report: no database at \(database.quotedExcerpt(limit: 200))")
        }
        let report: SessionReport
        do {
            // Read only: the file may be on read-only media, or another user's recording.
            let store = try RecordStore(readingOnly: database)
            defer { try? store.close() }
            report =
                if run != nil || patient != nil {
                    try Self.runReport(from: store, runs: run.map { [UInt64($0)] }, patient: patient)
                } else {
                    try Self.report(from: store, camera: camera, sessions: sessions)
                }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("kinesia report: \(error)")
        }
        let html = ReportPage.render(report)
        do {
            try Data(html.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw CLIError.failure(
                "kinesia report: cannot write \(output.quotedExcerpt(limit: 200)): \(error)")
        }
        let reps = report.sessions.map { "\($0.name) \($0.reps.count) reps" }.joined(separator: ", ")
        context.logger.info(
            "wrote \(output): \(report.title), \(reps), \(report.analytics.count) analytics records")
    }

    /// The report of runs: `runs`, or every run of `patient`; each run is its session's events
    /// and values of the run's stream, and the page names each run's exercise, side, patient
    /// and thresholds.
    /// - Throws: ``CLIError/failure(_:)`` when no such run is recorded.
    static func runReport(from store: RecordStore, runs: [UInt64]?, patient: String?) throws -> SessionReport
    {
        let chosen = try runs ?? store.runs(patient: patient ?? "")
        guard !chosen.isEmpty else {
            throw CLIError.failure(
                runs == nil
                    ? "kinesia report: no run of patient \(patient ?? "") is recorded"
                    : "kinesia report: run \(runs![0]) is not recorded")
        }
        var shown: [SessionReport.Session] = []
        var details: [String] = []
        var patients: [String] = []
        for run in chosen {
            let lines = try store.runRows(run: run)
            guard let first = lines.first else {
                throw CLIError.failure("kinesia report: run \(run) is not recorded")
            }
            let records = lines.compactMap { try? RunRecord(json: $0.json) }
            // The date it began, as recorded: `2026-12-04 09:30 UTC`.
            let date = first.recordedAt.map { " (" + Self.readableDate($0) + ")" } ?? ""
            var line = "Run \(run)\(date): \(first.camera)/\(first.session)"
            if case .started(let plan)? = records.first {
                line += ", \(plan.exercise.id) \(plan.analysis.rawValue)"
                if let patient = plan.patient {
                    line += ", patient \(patient)"
                    if !patients.contains(patient) { patients.append(patient) }
                }
                line += ", thresholds " + Self.thresholds(plan.exercise)
            }
            if case .ended(let end)? = records.last {
                line +=
                    "; ended (\(end.reason.rawValue)) at \(end.repCount) reps, \(end.rejectedCount) rejected"
            } else {
                line += "; not ended"
            }
            details.append(line)
            let events = try store.eventLines(
                camera: first.camera, session: first.session, streamID: first.streamID
            )
            .compactMap { try? MotionJSON.decodeEvent($0) }
            let samples = try store.values(
                camera: first.camera, session: first.session, streamID: first.streamID)
            shown.append(
                SessionReport.Session(
                    name: "\(first.session), run \(run)", samples: samples, events: events,
                    measuredBaseline: nil))
        }
        // One run, or several (the demo's day): their numbers and the patients they were of.
        var title = runs == nil ? "patient \(patient ?? "")" : "run \(chosen[0])"
        if runs != nil, chosen.count > 1 {
            title = "runs " + chosen.map(String.init).joined(separator: ", ")
            if !patients.isEmpty {
                title += " (patient\(patients.count == 1 ? "" : "s") \(patients.joined(separator: ", ")))"
            }
        }
        return SessionReport(title: title, sessions: shown, analytics: [], details: details)
    }

    /// `2026-12-04 09:30 UTC` of `2026-12-04T09:30:12Z` (anything else as it is).
    static func readableDate(_ iso: String) -> String {
        guard iso.count == 20, iso.hasSuffix("Z"), let time = iso.firstIndex(of: "T") else { return iso }
        return String(iso[..<time]) + " " + String(iso[iso.index(after: time)...].prefix(5)) + " UTC"
    }

    /// The thresholds of `exercise`, in words: `start 30°, end 20°, minPeak 60°`.
    static func thresholds(_ exercise: Exercise) -> String {
        switch exercise.kind {
        case .reps(let start, let end, let minPeak):
            "start \(JSONWriter.compactNumber(start))°, end \(JSONWriter.compactNumber(end))°, "
                + "minPeak \(JSONWriter.compactNumber(minPeak))°"
        case .hold(let threshold, let seconds):
            "threshold \(JSONWriter.compactNumber(threshold))° for \(JSONWriter.compactNumber(seconds)) s"
        }
    }

    /// The report of `camera`'s sessions in `store`.
    /// - Throws: ``CLIError/failure(_:)`` when the camera or a session has nothing recorded.
    static func report(from store: RecordStore, camera: String?, sessions: [String]) throws -> SessionReport {
        let recorded = try store.sessions()
        let cameras = Array(Set(recorded.map(\.camera))).sorted()
        guard let chosen = camera ?? (cameras.count == 1 ? cameras[0] : nil) else {
            throw CLIError.failure(
                cameras.isEmpty
                    ? "kinesia report: the database has no session"
                    : "kinesia report: give --camera, one of " + cameras.joined(separator: ", "))
        }
        let names = recorded.filter { $0.camera == chosen }.map(\.session)
        guard !names.isEmpty else {
            throw CLIError.failure(
                "kinesia report: nothing recorded for camera \(chosen); cameras: "
                    + cameras.joined(separator: ", "))
        }
        for session in sessions where !names.contains(session) {
            throw CLIError.failure(
                "kinesia report: no session \(session) of \(chosen); sessions: "
                    + names.joined(separator: ", "))
        }
        let shown = sessions.isEmpty ? names : sessions
        var motion: [SessionReport.Session] = []
        var analytics: [(t: Double, record: AnalyticsRecord)] = []
        for name in shown {
            analytics += try store.analytics(camera: chosen, session: name)
        }
        for name in shown {
            let events = try store.events(camera: chosen, session: name)
            let samples = try store.values(camera: chosen, session: name)
            guard !events.isEmpty || !samples.isEmpty else { continue }
            // A session named after a side shows that side's baseline from the analytics.
            let baseline = analytics.lazy.compactMap { (_, record) -> Double? in
                guard case .setSummary(let summary) = record, summary.side.rawValue == name else {
                    return nil
                }
                return summary.baseline
            }.last
            motion.append(
                SessionReport.Session(
                    name: name, samples: samples, events: events, measuredBaseline: baseline))
        }
        // In pose-time order, ties in the order read (sessions as shown, then rows): deterministic.
        let ordered = analytics.enumerated().sorted { ($0.element.t, $0.offset) < ($1.element.t, $1.offset) }
            .map(\.element)
        return SessionReport(title: chosen, sessions: motion, analytics: ordered)
    }
}
