import KinesiaControl
import KinesiaJSON
import KinesiaMotion
import KinesiaReport
import KinesiaStore

/// The runs `kinesia record` kept, read from its database (read only: it may be recording at
/// the same time, in WAL mode), for `GET /api/v1/runs` and a run's report.
public struct RunArchive: Sendable {
    /// The database.
    public let path: String

    /// The runs of the database at `path`.
    public init(path: String) {
        self.path = path
    }

    /// `{"runs":[...]}`, in order; each with its `run`, `camera`, `session`, `exercise`,
    /// `side`, `patient`, `startedAt` (UTC, as recorded), and once it ended `endedAt`,
    /// `reason`, `repCount`, `rejectedCount` (`null` before). Only `patient`'s runs when given.
    /// - Throws: ``RunArchiveError/database(_:)`` when the database cannot be opened or read.
    public func runsJSON(patient: String?) throws(RunArchiveError) -> String {
        let store = try RunArchiveError.reading { () throws(SQLiteError) in try RecordStore(readingOnly: path)
        }
        defer { try? store.close() }
        let wanted = try RunArchiveError.reading { () throws(SQLiteError) in
            try patient.map { (patient) throws(SQLiteError) in Set(try store.runs(patient: patient)) }
        }
        var runs: [UInt64: [(camera: String, session: String, record: RunRecord, at: String?)]] = [:]
        var order: [UInt64] = []
        for row in try RunArchiveError.reading({ () throws(SQLiteError) in try store.runRows() }) {
            guard let record = try? RunRecord(json: row.json) else { continue }
            if wanted.map({ !$0.contains(record.run) }) ?? false { continue }
            if runs[record.run] == nil { order.append(record.run) }
            runs[record.run, default: []].append((row.camera, row.session, record, row.recordedAt))
        }
        var text = "{\"runs\":["
        for (index, run) in order.enumerated() {
            let records = runs[run]!
            if index > 0 { text += "," }
            text += "{\"run\":\"\(run)\",\"camera\":"
            JSONWriter.appendString(records[0].camera, to: &text)
            text += ",\"session\":"
            JSONWriter.appendString(records[0].session, to: &text)
            var plan: SessionPlan?
            var end: RunRecord.RunEnd?
            var started: String?
            var ended: String?
            for entry in records {
                switch entry.record {
                case .started(let started_):
                    plan = started_
                    started = entry.at
                case .ended(let end_):
                    end = end_
                    ended = entry.at
                default: break
                }
            }
            text += ",\"exercise\":" + JSONWriter.optionalString(plan?.exercise.id)
            text += ",\"side\":" + JSONWriter.optionalString(plan?.analysis.rawValue)
            text += ",\"patient\":" + JSONWriter.optionalString(plan?.patient)
            text += ",\"startedAt\":" + JSONWriter.optionalString(started)
            text += ",\"endedAt\":" + JSONWriter.optionalString(ended)
            text += ",\"reason\":" + JSONWriter.optionalString(end?.reason.rawValue)
            text += ",\"repCount\":" + (end.map { "\($0.repCount)" } ?? "null")
            text += ",\"rejectedCount\":" + (end.map { "\($0.rejectedCount)" } ?? "null") + "}"
        }
        return text + "]}"
    }

    /// The HTML report of `run` (as `kinesia report --run` writes it), or `nil` when the
    /// database has no such run.
    /// - Throws: ``RunArchiveError/database(_:)`` when the database cannot be opened,
    ///   ``RunArchiveError/report(_:)`` when the run's report cannot be made.
    public func report(run: UInt64) throws(RunArchiveError) -> String? {
        let store = try RunArchiveError.reading { () throws(SQLiteError) in try RecordStore(readingOnly: path)
        }
        defer { try? store.close() }
        do {
            return ReportPage.render(try RecordedReport.runs([run], patient: nil, in: store))
        } catch {
            if case .notRecorded = error { return nil }
            throw .report(error)
        }
    }
}

extension RunArchiveError {
    /// What `body` returns; a database error it throws becomes ``database(_:)``.
    fileprivate static func reading<Value>(_ body: () throws(SQLiteError) -> Value) throws(RunArchiveError)
        -> Value
    {
        do {
            return try body()
        } catch {
            throw .database(error)
        }
    }
}
