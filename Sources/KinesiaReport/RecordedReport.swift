import KinesiaAnalytics
import KinesiaControl
import KinesiaJSON
public import KinesiaMotion
public import KinesiaStore

/// A report of what `kinesia record` stored: the runs asked for, or a camera's sessions, read
/// from its database into a ``SessionReport`` (what `kinesia report` and `kinesia demo` render
/// with ``ReportPage/render(_:)``).
///
/// ```swift
/// let store = try RecordStore(readingOnly: "clinic.db")
/// let page = ReportPage.render(try RecordedReport.runs(nil, patient: "p-17", in: store))
/// ```
public enum RecordedReport {
    /// The report of runs: `runs`, or every run of `patient`; each run is its session's events
    /// and values of the run's stream, and the page names each run's exercise, side, patient
    /// and thresholds.
    /// - Throws: ``RecordedReportError/notRecorded(_:)`` when no such run is recorded.
    public static func runs(_ runs: [UInt64]?, patient: String?, in store: RecordStore)
        throws(RecordedReportError)
        -> SessionReport
    {
        try reading { try runReport(runs, patient: patient, in: store) }
    }

    private static func runReport(_ runs: [UInt64]?, patient: String?, in store: RecordStore) throws
        -> SessionReport
    {
        let chosen = try runs ?? store.runs(patient: patient ?? "")
        guard !chosen.isEmpty else {
            throw RecordedReportError.notRecorded(
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
                throw RecordedReportError.notRecorded("kinesia report: run \(run) is not recorded")
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
    public static func readableDate(_ iso: String) -> String {
        guard iso.count == 20, iso.hasSuffix("Z"), let time = iso.firstIndex(of: "T") else { return iso }
        return String(iso[..<time]) + " " + String(iso[iso.index(after: time)...].prefix(5)) + " UTC"
    }

    /// The thresholds of `exercise`, in words: `start 30°, end 20°, minPeak 60°`.
    public static func thresholds(_ exercise: Exercise) -> String {
        switch exercise.kind {
        case .reps(let start, let end, let minPeak):
            "start \(JSONWriter.compactNumber(start))°, end \(JSONWriter.compactNumber(end))°, "
                + "minPeak \(JSONWriter.compactNumber(minPeak))°"
        case .hold(let threshold, let seconds):
            "threshold \(JSONWriter.compactNumber(threshold))° for \(JSONWriter.compactNumber(seconds)) s"
        }
    }

    /// The report of `camera`'s sessions in `store`.
    /// - Throws: ``RecordedReportError/notRecorded(_:)`` when the camera or a session has nothing recorded.
    public static func camera(_ camera: String?, sessions: [String], in store: RecordStore)
        throws(RecordedReportError) -> SessionReport
    {
        try reading { try cameraReport(camera, sessions: sessions, in: store) }
    }

    private static func cameraReport(_ camera: String?, sessions: [String], in store: RecordStore) throws
        -> SessionReport
    {
        let recorded = try store.sessions()
        let cameras = Array(Set(recorded.map(\.camera))).sorted()
        guard let chosen = camera ?? (cameras.count == 1 ? cameras[0] : nil) else {
            throw RecordedReportError.notRecorded(
                cameras.isEmpty
                    ? "kinesia report: the database has no session"
                    : "kinesia report: give --camera, one of " + cameras.joined(separator: ", "))
        }
        let names = recorded.filter { $0.camera == chosen }.map(\.session)
        guard !names.isEmpty else {
            throw RecordedReportError.notRecorded(
                "kinesia report: nothing recorded for camera \(chosen); cameras: "
                    + cameras.joined(separator: ", "))
        }
        for session in sessions where !names.contains(session) {
            throw RecordedReportError.notRecorded(
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

    /// `body`'s report; a database error is ``RecordedReportError/unreadable(_:)``.
    private static func reading(_ body: () throws -> SessionReport) throws(RecordedReportError)
        -> SessionReport
    {
        do {
            return try body()
        } catch let error as RecordedReportError {
            throw error
        } catch {
            throw .unreadable("kinesia report: \(error)")
        }
    }
}
