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
                    try RecordedReport.runs(run.map { [UInt64($0)] }, patient: patient, in: store)
                } else {
                    try RecordedReport.camera(camera, sessions: sessions, in: store)
                }
        } catch let error as RecordedReportError {
            throw CLIError.failure(error.description)
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
}
