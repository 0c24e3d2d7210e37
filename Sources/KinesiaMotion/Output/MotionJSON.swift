package import KinesiaJSON

/// The one-line JSON of events, snapshots, frames and summaries, shared by `kinesia analyze`,
/// the workers on the bus and consumers in any language.
///
/// Every object starts with `"type"`, then `"t"` (the pose timestamp) when it has one, then its
/// payload, always in the same key order. Numbers are written in Swift's shortest round-trip
/// form (`0.1`, `95.25`, `30.0`, `1e-05`), independent of the locale, so the same values always
/// give the same bytes and read back exactly. A number that is not finite is written `null`.
/// Raw values of ``FormFeedback``, ``SetupIssue`` and ``Joint`` are the stable names.
///
/// | type | keys after `"type"` |
/// |---|---|
/// | `repCompleted`, `repRejected` | `t`, `rep`: `{"peak","faults":[..],"start","end"}` |
/// | `holdStarted` | `t` |
/// | `formFault` | `t`, `fault` |
/// | `visibilityChanged` | `t`, `visibility`: `{"isVisible","missingJoints":[..]}` |
/// | `setupChanged` | `t`, `issues` (sorted by raw value) |
/// | `baselineCompleted` | `t`, `value` |
/// | `snapshot` | `t`, every ``MotionSnapshot`` field (`setupIssues` sorted) |
/// | `frame` | `t`, `raw`, `value` |
/// | `summary` | `repCount`, `rejectedCount`, `best`, `reps`, `rejectedPoses`: `{"total",` every ``PoseRejections/Reason``, in declaration order`}` |
///
/// ```swift
/// let line = MotionJSON.encode(.formFault(.keepTrunkUpright), at: 2.5)
/// // {"type":"formFault","t":2.5,"fault":"keepTrunkUpright"}
/// let (t, event) = try MotionJSON.decodeEvent(line)
/// ```
///
/// Decoders accept the keys in any order and ignore keys they do not know (so that newer
/// writers stay readable), but reject missing keys, wrong types and unknown raw values.
public enum MotionJSON {
    // MARK: - Encoding

    /// The JSON line of an event that happened at pose time `t`.
    public static func encode(_ event: MotionEvent, at t: Double) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        encode(event, at: t, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON line of an event (``encode(_:at:)-(MotionEvent,_)``'s bytes) to `out`.
    public static func encode(_ event: MotionEvent, at t: Double, into out: inout [UInt8]) {
        JSONByteWriter.append("{\"type\":", to: &out)
        JSONByteWriter.appendString(event.name, to: &out)
        JSONByteWriter.append(",\"t\":", to: &out)
        JSONByteWriter.appendNumber(t, to: &out)
        switch event {
        case .repCompleted(let rep), .repRejected(let rep):
            JSONByteWriter.append(",\"rep\":", to: &out)
            append(rep, to: &out)
        case .holdStarted:
            break
        case .formFault(let fault):
            JSONByteWriter.append(",\"fault\":", to: &out)
            JSONByteWriter.appendString(fault.rawValue, to: &out)
        case .visibilityChanged(let visibility):
            JSONByteWriter.append(",\"visibility\":{\"isVisible\":", to: &out)
            JSONByteWriter.appendBool(visibility.isVisible, to: &out)
            JSONByteWriter.append(",\"missingJoints\":", to: &out)
            appendNames(visibility.missingJoints, to: &out)
            JSONByteWriter.append("}", to: &out)
        case .setupChanged(let issues):
            JSONByteWriter.append(",\"issues\":", to: &out)
            appendSorted(issues, to: &out)
        case .baselineCompleted(let value):
            JSONByteWriter.append(",\"value\":", to: &out)
            JSONByteWriter.appendNumber(value, to: &out)
        }
        JSONByteWriter.append("}", to: &out)
    }

    /// The JSON object of a rep: `{"peak":P,"faults":[...],"start":S,"end":E}`.
    public static func encode(_ rep: Rep) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        append(rep, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The JSON line of a snapshot taken after the pose at `t`.
    public static func encode(_ snapshot: MotionSnapshot, at t: Double) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(384)
        encode(snapshot, at: t, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON line of a snapshot (``encode(_:at:)-(MotionSnapshot,_)``'s bytes) to
    /// `out`: written in place, without a string (a worker sends one for about every other pose).
    public static func encode(_ snapshot: MotionSnapshot, at t: Double, into out: inout [UInt8]) {
        encode(
            snapshot, at: t, into: &out, best: { JSONByteWriter.appendNumber($0, to: &$1) },
            lastRep: { append($0, to: &$1) })
    }

    /// ``encode(_:at:into:)-(MotionSnapshot,_,_)`` with the best value and the last rep written
    /// by the caller (``SnapshotJSONEncoder`` remembers their text).
    static func encode(
        _ snapshot: MotionSnapshot, at t: Double, into out: inout [UInt8],
        best: (Double, inout [UInt8]) -> Void, lastRep: (Rep, inout [UInt8]) -> Void
    ) {
        JSONByteWriter.append("{\"type\":\"snapshot\",\"t\":", to: &out)
        JSONByteWriter.appendNumber(t, to: &out)
        JSONByteWriter.append(",\"value\":", to: &out)
        JSONByteWriter.appendOptionalNumber(snapshot.value, to: &out)
        JSONByteWriter.append(",\"best\":", to: &out)
        best(snapshot.best, &out)
        JSONByteWriter.append(",\"repCount\":", to: &out)
        JSONByteWriter.appendInteger(snapshot.repCount, to: &out)
        JSONByteWriter.append(",\"rejectedCount\":", to: &out)
        JSONByteWriter.appendInteger(snapshot.rejectedCount, to: &out)
        JSONByteWriter.append(",\"lastRep\":", to: &out)
        if let rep = snapshot.lastRep {
            lastRep(rep, &out)
        } else {
            JSONByteWriter.append("null", to: &out)
        }
        JSONByteWriter.append(",\"holdProgress\":", to: &out)
        JSONByteWriter.appendOptionalNumber(snapshot.holdProgress, to: &out)
        JSONByteWriter.append(",\"confidence\":", to: &out)
        JSONByteWriter.appendOptionalNumber(snapshot.confidence, to: &out)
        JSONByteWriter.append(",\"setupIssues\":", to: &out)
        appendSorted(snapshot.setupIssues, to: &out)
        JSONByteWriter.append(",\"isVisible\":", to: &out)
        JSONByteWriter.appendBool(snapshot.isVisible, to: &out)
        JSONByteWriter.append(",\"missingJoints\":", to: &out)
        appendNames(snapshot.missingJoints, to: &out)
        JSONByteWriter.append(",\"isRunning\":", to: &out)
        JSONByteWriter.appendBool(snapshot.isRunning, to: &out)
        JSONByteWriter.append(",\"baseline\":", to: &out)
        if let baseline = snapshot.baseline {
            JSONByteWriter.append("{\"completed\":", to: &out)
            JSONByteWriter.appendInteger(baseline.completed, to: &out)
            JSONByteWriter.append(",\"target\":", to: &out)
            JSONByteWriter.appendInteger(baseline.target, to: &out)
            JSONByteWriter.append(",\"value\":", to: &out)
            JSONByteWriter.appendOptionalNumber(baseline.value, to: &out)
            JSONByteWriter.append("}", to: &out)
        } else {
            JSONByteWriter.append("null", to: &out)
        }
        JSONByteWriter.append("}", to: &out)
    }

    static func append(_ rep: Rep, to out: inout [UInt8]) {
        JSONByteWriter.append("{\"peak\":", to: &out)
        JSONByteWriter.appendNumber(rep.peak, to: &out)
        JSONByteWriter.append(",\"faults\":", to: &out)
        appendNames(rep.faults, to: &out)
        JSONByteWriter.append(",\"start\":", to: &out)
        JSONByteWriter.appendNumber(rep.start, to: &out)
        JSONByteWriter.append(",\"end\":", to: &out)
        JSONByteWriter.appendNumber(rep.end, to: &out)
        JSONByteWriter.append("}", to: &out)
    }

    /// A JSON array of raw values, in the order given (most often none: `[]`). Generic in this
    /// module, so that it is compiled for each type it is called with: the same function in
    /// another module was called generically (its type's metadata looked up at run time on
    /// every snapshot, 2.5 % of a worker's CPU), `@inlinable` notwithstanding.
    private static func appendNames<Value: RawRepresentable<String>>(_ values: [Value], to out: inout [UInt8])
    {
        guard !values.isEmpty else {
            JSONByteWriter.append("[]", to: &out)
            return
        }
        out.append(UInt8(ascii: "["))
        for index in values.indices {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONByteWriter.appendString(values[index].rawValue, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// A JSON array of a set's raw values, sorted (a set has no order of its own).
    private static func appendSorted<Value: RawRepresentable<String>>(
        _ values: Set<Value>, to out: inout [UInt8]
    ) {
        if values.isEmpty {
            JSONByteWriter.append("[]", to: &out)
        } else {
            JSONByteWriter.appendNames(values.map(\.rawValue).sorted(), to: &out)
        }
    }

    /// The JSON line of a frame: `{"type":"frame","t":T,"raw":x|null,"value":y|null}`.
    public static func encode(_ frame: MotionFrame) -> String {
        "{\"type\":\"frame\",\"t\":" + number(frame.t) + ",\"raw\":" + optional(frame.raw) + ",\"value\":"
            + optional(frame.value) + "}"
    }

    /// The JSON line of a summary:
    /// `{"type":"summary","repCount":N,"rejectedCount":N,"best":B,"reps":[...],"rejectedPoses":{"total":N,...}}`.
    public static func encode(_ summary: MotionSummary) -> String {
        var rejected = "{\"total\":" + String(summary.rejectedPoses.total)
        for reason in PoseRejections.Reason.allCases {
            rejected += ",\"" + reason.rawValue + "\":" + String(summary.rejectedPoses[reason])
        }
        return "{\"type\":\"summary\",\"repCount\":" + String(summary.repCount) + ",\"rejectedCount\":"
            + String(summary.rejectedCount) + ",\"best\":" + number(summary.best) + ",\"reps\":["
            + summary.reps.map(encode).joined(separator: ",") + "],\"rejectedPoses\":" + rejected + "}}"
    }

    private static func number(_ value: Double) -> String { JSONWriter.number(value) }

    private static func optional(_ value: Double?) -> String { value.map(JSONWriter.number) ?? "null" }

    // MARK: - Decoding

    /// Decodes any line this type writes.
    /// - Throws: ``MotionJSONError``: invalid JSON, an unknown `"type"`, or a known type with a
    ///   missing key, a wrong type or an unknown raw value.
    public static func decode(_ line: some StringProtocol) throws(MotionJSONError) -> MotionRecord {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw MotionJSONError(.invalidJSON, detail: "invalid JSON: \(error)")
        }
        let fields: JSONFields
        let type: String
        do {
            fields = try JSONFields(value, what: "a motion record")
            type = try fields.string("type")
        } catch {
            throw MotionJSONError(.invalidRecord, detail: error.message)
        }
        do {
            switch type {
            case "snapshot": return .snapshot(t: try fields.number("t"), try snapshot(from: fields))
            case "frame":
                return .frame(
                    MotionFrame(
                        t: try fields.number("t"), raw: try required(fields, "raw"),
                        value: try required(fields, "value")))
            case "summary":
                return .summary(
                    MotionSummary(
                        repCount: try fields.integer("repCount"),
                        rejectedCount: try fields.integer("rejectedCount"),
                        best: try fields.number("best"), reps: try reps(fields.array("reps")),
                        rejectedPoses: try rejections(fields.optionalObject("rejectedPoses"))))
            default:
                guard let event = try event(type: type, from: fields) else {
                    throw MotionJSONError(.unknownType, detail: "unknown type \(type.quotedExcerpt())")
                }
                return .event(t: try fields.number("t"), event)
            }
        } catch let error as JSONShapeError {
            throw MotionJSONError(.invalidRecord, detail: "\(type): \(error.message)")
        } catch let error as MotionJSONError {
            throw error
        } catch {
            throw MotionJSONError(.invalidRecord, detail: "\(type): \(error)")
        }
    }

    /// Decodes an event line.
    /// - Returns: The pose timestamp and the event.
    /// - Throws: ``MotionJSONError``, also when the line is valid but not an event.
    public static func decodeEvent(_ line: some StringProtocol) throws(MotionJSONError) -> (
        t: Double, event: MotionEvent
    ) {
        let record = try decode(line)
        guard case .event(let t, let event) = record else {
            throw MotionJSONError(.invalidRecord, detail: "expected an event, found \(kindName(of: record))")
        }
        return (t, event)
    }

    /// Decodes a snapshot line.
    /// - Returns: The pose timestamp and the snapshot.
    /// - Throws: ``MotionJSONError``, also when the line is valid but not a snapshot.
    public static func decodeSnapshot(
        _ line: some StringProtocol
    ) throws(MotionJSONError) -> (t: Double, snapshot: MotionSnapshot) {
        let record = try decode(line)
        guard case .snapshot(let t, let snapshot) = record else {
            throw MotionJSONError(
                .invalidRecord, detail: "expected a snapshot, found \(kindName(of: record))")
        }
        return (t, snapshot)
    }

    private static func kindName(of record: MotionRecord) -> String {
        switch record {
        case .event(_, let event): "an event (\(event.name))"
        case .snapshot: "a snapshot"
        case .frame: "a frame"
        case .summary: "a summary"
        }
    }

    /// A key that must be present but may be `null`.
    private static func required(_ fields: JSONFields, _ key: String) throws(JSONShapeError) -> Double? {
        _ = try fields.value(key)
        return try fields.optionalNumber(key)
    }

    private static func event(type: String, from fields: JSONFields) throws(JSONShapeError) -> MotionEvent? {
        switch type {
        case "repCompleted": return .repCompleted(try rep(fields.value("rep")))
        case "repRejected": return .repRejected(try rep(fields.value("rep")))
        case "holdStarted": return .holdStarted
        case "formFault": return .formFault(try fault(fields.string("fault")))
        case "visibilityChanged":
            let visibility = try fields.object("visibility")
            return .visibilityChanged(
                Visibility(
                    isVisible: try visibility.bool("isVisible"),
                    missingJoints: try joints(visibility.strings("missingJoints"))))
        case "setupChanged": return .setupChanged(Set(try issues(fields.strings("issues"))))
        case "baselineCompleted": return .baselineCompleted(try fields.number("value"))
        default: return nil
        }
    }

    private static func rep(_ value: JSONValue) throws(JSONShapeError) -> Rep {
        let fields = try JSONFields(value, what: "\"rep\"")
        var faults: [FormFeedback] = []
        for name in try fields.strings("faults") { faults.append(try fault(name)) }
        return Rep(
            peak: try fields.number("peak"), faults: faults, start: try fields.number("start"),
            end: try fields.number("end"))
    }

    /// Reads reps as ``encode(_:)-(Rep)`` writes them (a summary's or a run's `"reps"`).
    ///
    /// - Throws: `JSONShapeError` for a rep with a missing or wrong field or an unknown fault.
    package static func reps(_ values: [JSONValue]) throws(JSONShapeError) -> [Rep] {
        var result: [Rep] = []
        for value in values { result.append(try rep(value)) }
        return result
    }

    /// The counts of a summary's `"rejectedPoses"` (zero when a summary written before it has
    /// none; a reason not written counts zero, a reason not known is ignored).
    private static func rejections(_ fields: JSONFields?) throws(JSONShapeError) -> PoseRejections {
        var counts = PoseRejections()
        guard let fields else { return counts }
        for reason in PoseRejections.Reason.allCases where fields.members[reason.rawValue] != nil {
            let count = try fields.integer(reason.rawValue)
            guard count >= 0 else { throw JSONShapeError("\"\(reason.rawValue)\" must not be negative") }
            counts[reason] = count
        }
        return counts
    }

    private static func fault(_ name: String) throws(JSONShapeError) -> FormFeedback {
        guard let fault = FormFeedback(rawValue: name) else {
            throw JSONShapeError("unknown fault \(name.quotedExcerpt())")
        }
        return fault
    }

    private static func issues(_ names: [String]) throws(JSONShapeError) -> [SetupIssue] {
        var result: [SetupIssue] = []
        for name in names {
            guard let issue = SetupIssue(rawValue: name) else {
                throw JSONShapeError("unknown setup issue \(name.quotedExcerpt())")
            }
            result.append(issue)
        }
        return result
    }

    private static func joints(_ names: [String]) throws(JSONShapeError) -> [Joint] {
        var result: [Joint] = []
        for name in names {
            guard let joint = Joint(rawValue: name) else {
                throw JSONShapeError("unknown joint \(name.quotedExcerpt())")
            }
            result.append(joint)
        }
        return result
    }

    private static func snapshot(from fields: JSONFields) throws(JSONShapeError) -> MotionSnapshot {
        var snapshot = MotionSnapshot()
        snapshot.value = try required(fields, "value")
        snapshot.best = try fields.number("best")
        snapshot.repCount = try fields.integer("repCount")
        snapshot.rejectedCount = try fields.integer("rejectedCount")
        _ = try fields.value("lastRep")
        if let lastRep = fields.members["lastRep"], lastRep != .null { snapshot.lastRep = try rep(lastRep) }
        snapshot.holdProgress = try required(fields, "holdProgress")
        snapshot.confidence = try required(fields, "confidence")
        snapshot.setupIssues = Set(try issues(fields.strings("setupIssues")))
        snapshot.isVisible = try fields.bool("isVisible")
        snapshot.missingJoints = try joints(fields.strings("missingJoints"))
        snapshot.isRunning = try fields.bool("isRunning")
        _ = try fields.value("baseline")
        if let baseline = try fields.optionalObject("baseline") {
            snapshot.baseline = BaselineProgress(
                completed: try baseline.integer("completed"), target: try baseline.integer("target"),
                value: try required(baseline, "value"))
        }
        return snapshot
    }
}
