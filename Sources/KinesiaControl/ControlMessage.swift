import KinesiaJSON
import KinesiaMotion

/// A message on the control socket (`control.sock` in the bus directory): one frame, a JSON
/// object whose `"type"` says which (docs/control-plane.md has every field).
///
/// - `request`: a command for the coordinator (``ControlRequest``);
/// - `answer`: the coordinator's answer (``ControlAnswer``);
/// - `workerReport`: a pool worker's heartbeat (``WorkerReport``);
/// - `assignment`: the sessions a worker hosts (``WorkerAssignment``);
/// - `lease`: the coordinator's answer to a worker's numbered heartbeat (``LeaseGrant``).
///
/// Sequence and run numbers are decimal strings (every `UInt64` reads back exactly). Decoding
/// is strict: an unknown type or field, a missing field or a value out of range is refused
/// with what is wrong, never half read.
///
/// ```swift
/// let bytes = ControlMessage.request(request).encoded()
/// let message = try ControlMessage(decoding: bytes)
/// ```
public enum ControlMessage: Hashable, Sendable {
    /// A command for the coordinator.
    case request(ControlRequest)
    /// The coordinator's answer.
    case answer(ControlAnswer)
    /// A pool worker's heartbeat.
    case workerReport(WorkerReport)
    /// The sessions a worker hosts.
    case assignment(WorkerAssignment)
    /// The coordinator's answer to a worker's heartbeat: it holds its sessions for a lease.
    case lease(LeaseGrant)

    /// The longest message read (a list of many sessions with their exercise files).
    public static let maximumSize = 4 << 20

    /// The message as one JSON line, without a newline, as UTF-8.
    public func encoded() -> [UInt8] {
        var out = "{"
        switch self {
        case .request(let request):
            out += "\"type\":\"request\",\"id\":" + JSONWriter.string(request.id)
            out += ",\"command\":\"\(request.verb)\""
            switch request.command {
            case .start(var plan):
                plan.run = 0
                plan.baselineReps = nil
                plan.beginsAtStreamStart = false
                out += "," + Self.planFields(plan)
            case .stop(let key), .reset(let key): out += ",\"session\":" + JSONWriter.string(key.description)
            case .baseline(let key, let reps):
                out += ",\"session\":" + JSONWriter.string(key.description)
                if let reps { out += ",\"reps\":\(reps)" }
            case .list: break
            }
        case .answer(let answer):
            out += "\"type\":\"answer\",\"id\":" + JSONWriter.string(answer.id)
            out +=
                ",\"outcome\":\"\(answer.outcome.rawValue)\",\"message\":" + JSONWriter.string(answer.message)
            if let worker = answer.worker { out += ",\"worker\":" + JSONWriter.string(worker) }
            if let run = answer.run { out += ",\"run\":\"\(run)\"" }
            if !answer.sessions.isEmpty || answer.outcome == .listed {
                out += ",\"sessions\":["
                out += answer.sessions.map { status in
                    "{" + Self.planFields(status.plan)
                        + (status.worker.map { ",\"assignedTo\":" + JSONWriter.string($0) } ?? "")
                        + ",\"state\":\"\(status.state.rawValue)\""
                        + Self.countFields(status.repCount, status.rejectedCount) + "}"
                }.joined(separator: ",")
                out += "]"
            }
        case .workerReport(let report):
            out += "\"type\":\"workerReport\",\"worker\":" + JSONWriter.string(report.worker)
            out += ",\"pool\":" + JSONWriter.string(report.pool) + ",\"capacity\":\(report.capacity)"
            out += ",\"epoch\":\"\(report.epoch)\""
            if let number = report.number { out += ",\"report\":\"\(number)\"" }
            out += ",\"sessions\":["
            out += report.sessions.map {
                "{\"session\":" + JSONWriter.string($0.key.description) + ",\"run\":\"\($0.run)\""
                    + Self.countFields($0.repCount, $0.rejectedCount)
                    + ($0.resume.map { ",\"resume\":{" + Self.resumeFields($0) + "}" } ?? "") + "}"
            }.joined(separator: ",")
            out += "]"
        case .assignment(let assignment):
            out += "\"type\":\"assignment\",\"epoch\":\"\(assignment.epoch)\",\"sessions\":["
            out += assignment.sessions.map { "{" + Self.planFields($0) + "}" }.joined(separator: ",")
            out += "]"
            if !assignment.stopped.isEmpty {
                out += ",\"stopped\":["
                out += assignment.stopped.sorted { $0.key < $1.key }.map {
                    "{\"session\":" + JSONWriter.string($0.key.description) + ",\"run\":\"\($0.value)\"}"
                }.joined(separator: ",")
                out += "]"
            }
            if !assignment.resumes.isEmpty {
                out += ",\"resumes\":["
                out += assignment.resumes.sorted { $0.key < $1.key }.map {
                    "{\"session\":" + JSONWriter.string($0.key.description) + ",\"run\":\"\($0.value.run)\","
                        + Self.resumeFields($0.value.resume) + "}"
                }.joined(separator: ",")
                out += "]"
            }
        case .lease(let grant):
            out += "\"type\":\"lease\",\"report\":\"\(grant.report)\""
            out += ",\"milliseconds\":\(grant.milliseconds)"
        }
        out += "}"
        return Array(out.utf8)
    }

    /// The `"id"` string of a message that is a JSON object with one, whatever else is wrong
    /// with it (so that a refused request can still be answered).
    ///
    /// - Throws: ``ControlError/malformed(_:)`` when there is none.
    public static func requestID(in bytes: [UInt8]) throws(ControlError) -> String {
        guard bytes.count <= maximumSize, let value = try? JSONParser.parse(bytes: bytes),
            let fields = try? JSONFields(value), let id = try? fields.string("id")
        else { throw .malformed("no request id") }
        return id
    }

    /// A plan alone, as the JSON object the messages hold (how the coordinator keeps it).
    public static func encoded(_ plan: SessionPlan) -> [UInt8] {
        Array(("{" + planFields(plan) + "}").utf8)
    }

    /// Reads a plan that ``encoded(_:)`` wrote.
    ///
    /// - Throws: ``ControlError``, as ``init(decoding:)``.
    public static func plan(decoding bytes: [UInt8]) throws(ControlError) -> SessionPlan {
        try decodingObject(bytes, what: "a session plan") { fields in
            try fields.rejectUnknownKeys(allowed: planKeys)
            return try plan(fields)
        }
    }

    /// Reads `bytes` as one JSON object (`what` names it in errors) with `read`, its errors as
    /// ``ControlError/malformed(_:)`` (a ``ControlError`` as it is).
    private static func decodingObject<Value>(
        _ bytes: [UInt8], what: String, _ read: (JSONFields) throws -> Value
    ) throws(ControlError) -> Value {
        do {
            return try read(try JSONFields(try JSONParser.parse(bytes: bytes), what: what))
        } catch let error as JSONShapeError {
            let field = JSONPathComponent.describe(error.path)
            throw .malformed((field.isEmpty ? "" : field + ": ") + error.message)
        } catch let error as JSONSyntaxError {
            throw .malformed("not JSON: \(error.message)")
        } catch let error as ControlError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }

    /// A run's resume alone, as the JSON object the coordinator keeps:
    /// `{"run":"N","stream":...,"segments":[...]}`.
    public static func encoded(_ given: WorkerAssignment.GivenResume) -> [UInt8] {
        Array(("{\"run\":\"\(given.run)\"," + resumeFields(given.resume) + "}").utf8)
    }

    /// Reads a resume that ``encoded(_:)-(WorkerAssignment.GivenResume)`` wrote.
    ///
    /// - Throws: ``ControlError/malformed(_:)``.
    public static func givenResume(decoding bytes: [UInt8]) throws(ControlError)
        -> WorkerAssignment.GivenResume
    {
        try decodingObject(bytes, what: "a run's resume") { fields in
            try fields.rejectUnknownKeys(allowed: ["run", "stream", "segments"])
            return WorkerAssignment.GivenResume(run: try number(fields, "run"), resume: try resume(fields))
        }
    }

    /// `,"repCount":N,"rejectedCount":N` when the counts are known, else nothing.
    static func countFields(_ repCount: Int?, _ rejectedCount: Int?) -> String {
        guard let repCount, let rejectedCount else { return "" }
        return ",\"repCount\":\(repCount),\"rejectedCount\":\(rejectedCount)"
    }

    /// The fields of a resume, without braces: `"stream":"<16 hex>","segments":[...]`.
    static func resumeFields(_ resume: RunResume) -> String {
        "\"stream\":\"\(hex(resume.stream))\",\"segments\":["
            + resume.segments.map { segment in
                "{\"stream\":\"\(hex(segment.stream))\",\"first\":\"\(segment.first)\""
                    + (segment.last.map { ",\"last\":\"\($0)\"" } ?? "")
                    + (segment.skipped.isEmpty
                        ? ""
                        : ",\"skipped\":["
                            + segment.skipped.map { "[\"\($0.lowerBound)\",\"\($0.upperBound)\"]" }.joined(
                                separator: ",") + "]") + "}"
            }.joined(separator: ",") + "]"
    }

    /// A stream id as 16 hexadecimal digits.
    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Reads a resume's `stream` and `segments`.
    private static func resume(_ fields: JSONFields) throws -> RunResume {
        let stream = try streamID(fields, "stream")
        var segments: [RunResume.Segment] = []
        var holes = 0
        for (index, item) in try fields.array("segments").enumerated() {
            let entry = try JSONFields(
                item, what: "a segment", path: fields.path("segments") + [.index(index)])
            try entry.rejectUnknownKeys(allowed: ["stream", "first", "last", "skipped"])
            let first = try number(entry, "first")
            let last = entry.has("last") ? try number(entry, "last") : nil
            guard (last ?? first) >= first else {
                throw entry.error("last", "a segment's last pose is never before its first")
            }
            var skipped: [Range<UInt64>] = []
            if entry.has("skipped") {
                for range in try entry.array("skipped") {
                    guard case .array(let bounds) = range, bounds.count == 2,
                        case .string(let lowerText) = bounds[0], case .string(let upperText) = bounds[1],
                        let lower = UInt64(lowerText), let upper = UInt64(upperText), lower < upper,
                        lower >= (skipped.last?.upperBound ?? 0)
                    else {
                        throw entry.error(
                            "skipped", "\"skipped\" holds [from, upTo] pairs in order, from < upTo")
                    }
                    skipped.append(lower..<upper)
                }
            }
            holes += skipped.count
            guard holes <= RunResume.maximumSkipped else {
                throw entry.error("skipped", "more than \(RunResume.maximumSkipped) holes")
            }
            segments.append(
                RunResume.Segment(
                    stream: try streamID(entry, "stream"), first: first, last: last, skipped: skipped))
        }
        return RunResume(stream: stream, segments: segments)
    }

    /// A report's `resume` object.
    private static func reportedResume(_ fields: JSONFields) throws -> RunResume {
        try fields.rejectUnknownKeys(allowed: ["stream", "segments"])
        return try resume(fields)
    }

    /// 16 hexadecimal digits of a stream id, never 0.
    private static func streamID(_ fields: JSONFields, _ key: String) throws -> UInt64 {
        let text = try fields.string(key)
        guard text.utf8.count == 16, let value = UInt64(text, radix: 16), value != 0 else {
            throw fields.error(key, "a stream id is 16 hexadecimal digits, not 0")
        }
        return value
    }

    /// The fields of a plan, in a fixed order, without braces.
    static func planFields(_ plan: SessionPlan) -> String {
        var out = "\"session\":" + JSONWriter.string(plan.key.description)
        out += ",\"exercise\":" + JSONWriter.string(plan.exercise.id)
        out += ",\"exerciseFile\":" + JSONWriter.string(plan.exerciseFile)
        out += ",\"side\":\"\(plan.analysis.rawValue)\""
        if let patient = plan.patient { out += ",\"patient\":" + JSONWriter.string(patient) }
        out += ",\"pool\":" + JSONWriter.string(plan.pool)
        if let worker = plan.worker { out += ",\"worker\":" + JSONWriter.string(worker) }
        if plan.run != 0 { out += ",\"run\":\"\(plan.run)\"" }
        if let reps = plan.baselineReps { out += ",\"baselineReps\":\(reps)" }
        if plan.beginsAtStreamStart { out += ",\"fromStreamStart\":true" }
        return out
    }

    /// Reads a message.
    ///
    /// - Throws: ``ControlError/malformed(_:)`` for bytes that are not a control message of
    ///   this version; ``ControlError/invalid(_:)`` for a message whose values are not valid
    ///   (a name, an exercise file).
    public init(decoding bytes: [UInt8]) throws(ControlError) {
        guard bytes.count <= Self.maximumSize else {
            throw .malformed("a control message of \(bytes.count) bytes (at most \(Self.maximumSize))")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes: bytes)
        } catch {
            throw .malformed("not JSON: \(error.message)")
        }
        do {
            let fields = try JSONFields(value, what: "a control message")
            switch try fields.string("type") {
            case "request": self = .request(try Self.request(fields))
            case "answer": self = .answer(try Self.answer(fields))
            case "workerReport": self = .workerReport(try Self.report(fields))
            case "assignment": self = .assignment(try Self.assignment(fields))
            case "lease": self = .lease(try Self.lease(fields))
            case let other:
                throw fields.error("type", "unknown control message type \(other.debugDescription)")
            }
        } catch let error as JSONShapeError {
            let field = JSONPathComponent.describe(error.path)
            throw .malformed((field.isEmpty ? "" : field + ": ") + error.message)
        } catch let error as ControlError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }

    private static func request(_ fields: JSONFields) throws -> ControlRequest {
        let command: ControlRequest.Command
        switch try fields.string("command") {
        case "start":
            // The run is the coordinator's to give, and so are a baseline (`baseline`) and where
            // the run begins (whether an ingest is heard publishing the camera).
            try fields.rejectUnknownKeys(
                allowed: planKeys.subtracting(["run", "baselineReps", "fromStreamStart"]).union([
                    "type", "id", "command",
                ]))
            command = .start(try plan(fields))
        case "stop":
            try fields.rejectUnknownKeys(allowed: ["type", "id", "command", "session"])
            command = .stop(try SessionKey(parsing: fields.string("session")))
        case "reset":
            try fields.rejectUnknownKeys(allowed: ["type", "id", "command", "session"])
            command = .reset(try SessionKey(parsing: fields.string("session")))
        case "baseline":
            try fields.rejectUnknownKeys(allowed: ["type", "id", "command", "session", "reps"])
            var reps: Int?
            if fields.has("reps") {
                let value = try fields.integer("reps")
                try SessionPlan.checkBaseline(reps: value)
                reps = value
            }
            command = .baseline(try SessionKey(parsing: fields.string("session")), reps: reps)
        case "list":
            try fields.rejectUnknownKeys(allowed: ["type", "id", "command"])
            command = .list
        case let other:
            throw fields.error(
                "command", "unknown command \(other.debugDescription): start, stop, reset, baseline or list")
        }
        return try ControlRequest(id: fields.string("id"), command: command)
    }

    private static func answer(_ fields: JSONFields) throws -> ControlAnswer {
        try fields.rejectUnknownKeys(allowed: [
            "type", "id", "outcome", "message", "worker", "run", "sessions",
        ])
        let word = try fields.string("outcome")
        guard let outcome = ControlAnswer.Outcome(rawValue: word) else {
            throw fields.error("outcome", "unknown outcome \(word.debugDescription)")
        }
        var sessions: [SessionStatus] = []
        if fields.has("sessions") {
            for (index, item) in try fields.array("sessions").enumerated() {
                let entry = try JSONFields(
                    item, what: "a session", path: fields.path("sessions") + [.index(index)])
                try entry.rejectUnknownKeys(
                    allowed: planKeys.union(["assignedTo", "state", "repCount", "rejectedCount"]))
                let stateWord = try entry.string("state")
                guard let state = SessionStatus.State(rawValue: stateWord) else {
                    throw entry.error("state", "unknown state \(stateWord.debugDescription)")
                }
                let (repCount, rejectedCount) = try counts(entry)
                sessions.append(
                    SessionStatus(
                        plan: try plan(entry),
                        worker: entry.has("assignedTo") ? try entry.string("assignedTo") : nil,
                        state: state, repCount: repCount, rejectedCount: rejectedCount))
            }
        }
        return ControlAnswer(
            id: try fields.string("id"), outcome: outcome, message: try fields.string("message"),
            worker: fields.has("worker") ? try fields.string("worker") : nil,
            run: fields.has("run") ? try number(fields, "run") : nil, sessions: sessions)
    }

    private static func report(_ fields: JSONFields) throws -> WorkerReport {
        try fields.rejectUnknownKeys(allowed: [
            "type", "worker", "pool", "capacity", "epoch", "report", "sessions",
        ])
        let worker = try fields.string("worker")
        let pool = try fields.string("pool")
        for (role, name) in [("worker", worker), ("pool", pool)] where !ControlNames.isValid(name) {
            throw ControlError.invalid(ControlNames.message(name, role: role))
        }
        let capacity = try fields.integer("capacity")
        guard capacity >= 0 else { throw fields.error("capacity", "must not be negative") }
        var sessions: [WorkerReport.Running] = []
        for (index, item) in try fields.array("sessions").enumerated() {
            let entry = try JSONFields(
                item, what: "a session", path: fields.path("sessions") + [.index(index)])
            try entry.rejectUnknownKeys(allowed: ["session", "run", "repCount", "rejectedCount", "resume"])
            let (repCount, rejectedCount) = try counts(entry)
            sessions.append(
                WorkerReport.Running(
                    key: try SessionKey(parsing: entry.string("session")), run: try number(entry, "run"),
                    repCount: repCount, rejectedCount: rejectedCount,
                    resume: entry.has("resume") ? try reportedResume(try entry.object("resume")) : nil))
        }
        return WorkerReport(
            worker: worker, pool: pool, capacity: capacity, sessions: sessions,
            epoch: try number(fields, "epoch"),
            number: fields.has("report") ? try number(fields, "report") : nil)
    }

    private static func lease(_ fields: JSONFields) throws -> LeaseGrant {
        try fields.rejectUnknownKeys(allowed: ["type", "report", "milliseconds"])
        let milliseconds = try fields.integer("milliseconds")
        guard (1...3_600_000).contains(milliseconds) else {
            throw fields.error("milliseconds", "a lease of 1 ms to an hour")
        }
        return LeaseGrant(report: try number(fields, "report"), lease: .milliseconds(milliseconds))
    }

    private static func assignment(_ fields: JSONFields) throws -> WorkerAssignment {
        try fields.rejectUnknownKeys(allowed: ["type", "epoch", "sessions", "stopped", "resumes"])
        var resumes: [SessionKey: WorkerAssignment.GivenResume] = [:]
        if fields.has("resumes") {
            for (index, item) in try fields.array("resumes").enumerated() {
                let entry = try JSONFields(
                    item, what: "a resume", path: fields.path("resumes") + [.index(index)])
                try entry.rejectUnknownKeys(allowed: ["session", "run", "stream", "segments"])
                resumes[try SessionKey(parsing: entry.string("session"))] = WorkerAssignment.GivenResume(
                    run: try number(entry, "run"), resume: try resume(entry))
            }
        }
        var stopped: [SessionKey: UInt64] = [:]
        if fields.has("stopped") {
            for (index, item) in try fields.array("stopped").enumerated() {
                let entry = try JSONFields(
                    item, what: "a stopped run", path: fields.path("stopped") + [.index(index)])
                try entry.rejectUnknownKeys(allowed: ["session", "run"])
                stopped[try SessionKey(parsing: entry.string("session"))] = try number(entry, "run")
            }
        }
        var plans: [SessionPlan] = []
        for (index, item) in try fields.array("sessions").enumerated() {
            let entry = try JSONFields(
                item, what: "a session", path: fields.path("sessions") + [.index(index)])
            try entry.rejectUnknownKeys(allowed: planKeys)
            plans.append(try plan(entry))
        }
        return WorkerAssignment(
            epoch: try number(fields, "epoch"), sessions: plans, stopped: stopped, resumes: resumes)
    }

    private static let planKeys: Set<String> = [
        "session", "exercise", "exerciseFile", "side", "patient", "pool", "worker", "run", "baselineReps",
        "fromStreamStart",
    ]

    private static func plan(_ fields: JSONFields) throws -> SessionPlan {
        let key = try SessionKey(parsing: fields.string("session"))
        let id = try fields.string("exercise")
        let file =
            fields.has("exerciseFile")
            ? try fields.string("exerciseFile") : try SessionPlan.catalogExercise(id)
        let plan = try SessionPlan(
            key: key, exerciseFile: file, analysis: SessionPlan.Analysis(parsing: fields.string("side")),
            patient: fields.has("patient") ? try fields.string("patient") : nil,
            pool: fields.has("pool") ? try fields.string("pool") : SessionPlan.defaultPool,
            worker: fields.has("worker") ? try fields.string("worker") : nil,
            run: fields.has("run") ? try number(fields, "run") : 0,
            baselineReps: fields.has("baselineReps") ? try fields.integer("baselineReps") : nil,
            beginsAtStreamStart: fields.has("fromStreamStart") ? try fields.bool("fromStreamStart") : false)
        guard plan.exercise.id == id else {
            throw fields.error(
                "exercise", "\(id.debugDescription) differs from the exercise file's \(plan.exercise.id)")
        }
        return plan
    }

    /// The optional `repCount` and `rejectedCount`: both or neither, never negative.
    private static func counts(_ fields: JSONFields) throws -> (Int?, Int?) {
        guard fields.has("repCount") || fields.has("rejectedCount") else { return (nil, nil) }
        let repCount = try fields.integer("repCount")
        let rejectedCount = try fields.integer("rejectedCount")
        guard repCount >= 0, rejectedCount >= 0 else {
            throw fields.error("repCount", "counts are never negative")
        }
        return (repCount, rejectedCount)
    }

    /// A decimal string of a `UInt64`.
    private static func number(_ fields: JSONFields, _ key: String) throws -> UInt64 {
        guard let value = UInt64(try fields.string(key)) else {
            throw fields.error(key, "must be a whole number as a decimal string")
        }
        return value
    }
}
