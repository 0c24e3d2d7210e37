import KinesiaJSON
public import KinesiaMotion

/// The one-line JSON of ``AnalyticsRecord``s, as the analytics session publishes them on
/// `event/<camera>/<session>/` (documented in `docs/wire-format.md`, section "Analytics").
///
/// As ``MotionJSON``: `"type"` first, then `"t"` (the pose timestamp at which the record was
/// made), then the payload in a fixed key order; numbers in Swift's shortest round-trip form,
/// `null` for a figure that has no value; faults by raw value, in ``FormFeedback`` declaration
/// order in objects.
///
/// ```swift
/// let line = AnalyticsJSON.encode(record, at: 12.5)
/// let (t, decoded) = try AnalyticsJSON.decode(line)
/// ```
///
/// The decoder accepts keys in any order and ignores keys it does not know; it rejects missing
/// keys, wrong types and unknown raw values, and reports a `"type"` that is not an analytics
/// record as ``MotionJSONError/Kind/unknownType``.
public enum AnalyticsJSON {
    // MARK: Encoding

    /// The JSON line of `record`, made at pose time `t`.
    public static func encode(_ record: AnalyticsRecord, at t: Double) -> String {
        var out = "{\"type\":\"" + record.name + "\",\"t\":"
        JSONWriter.appendNumber(t, to: &out)
        switch record {
        case .repTempo(let tempo):
            out += ",\"side\":\"" + tempo.side.rawValue + "\",\"rep\":" + String(tempo.number)
            out += ",\"set\":" + String(tempo.set) + ",\"clean\":" + (tempo.isClean ? "true" : "false")
            out += ",\"faults\":["
            out += tempo.faults.map { JSONWriter.string($0.rawValue) }.joined(separator: ",")
            out += "]"
            for (key, value) in [
                ("peak", tempo.peak), ("low", tempo.low), ("range", tempo.range), ("start", tempo.start),
                ("peakTime", tempo.peakTime), ("end", tempo.end), ("timeUp", tempo.timeUp),
                ("timeAtTop", tempo.timeAtTop), ("timeDown", tempo.timeDown),
                ("timeUnderTension", tempo.timeUnderTension),
            ] {
                append(key, value, to: &out)
            }
        case .repSymmetry(let pair):
            out += ",\"set\":" + String(pair.set) + ",\"pair\":" + String(pair.pair)
            for (key, side) in [("left", pair.left), ("right", pair.right)] {
                out += ",\"" + key + "\":{\"rep\":" + String(side.number)
                append("peak", side.peak, to: &out)
                append("range", side.range, to: &out)
                append("timeUnderTension", side.timeUnderTension, to: &out)
                out += "}"
            }
            append("peakDifference", pair.peakDifference, to: &out)
            append("rangeRatio", pair.rangeRatio, to: &out)
            append("tempoRatio", pair.tempoRatio, to: &out)
        case .setSummary(let summary):
            out += ",\"side\":\"" + summary.side.rawValue + "\",\"set\":" + String(summary.set)
            out += ",\"complete\":" + (summary.isComplete ? "true" : "false")
            out += ",\"reps\":" + String(summary.reps) + ",\"clean\":" + String(summary.clean)
            out += ",\"rejected\":" + String(summary.rejected)
            append("rejectedShare", summary.rejectedShare, to: &out)
            let faults = FormFeedback.allCases.filter { summary.rejectedByFault[$0, default: 0] > 0 }
            out += ",\"rejectedByFault\":{"
            out += faults.map { JSONWriter.string($0.rawValue) + ":" + String(summary.rejectedByFault[$0]!) }
                .joined(separator: ",")
            out += "},\"rejectedShareByFault\":{"
            out += faults.map {
                JSONWriter.string($0.rawValue) + ":" + JSONWriter.number(summary.rejectedShare(for: $0))
            }.joined(separator: ",")
            out += "}"
            append("firstPeak", summary.firstPeak, to: &out)
            append("lastPeak", summary.lastPeak, to: &out)
            append("peakSlope", summary.peakSlope, to: &out)
            append("meanCleanPeak", summary.meanCleanPeak, to: &out)
            append("baseline", summary.baseline, to: &out)
            append("progress", summary.progress, to: &out)
            append("progressPercent", summary.progressPercent, to: &out)
        }
        return out + "}"
    }

    private static func append(_ key: String, _ value: Double?, to out: inout String) {
        out += ",\"" + key + "\":"
        if let value { JSONWriter.appendNumber(value, to: &out) } else { out += "null" }
    }

    // MARK: Decoding

    /// Whether `line` is an object whose `"type"` is an analytics record's, without decoding
    /// the rest (`false` for anything else, invalid JSON included).
    public static func isAnalytics(_ line: some StringProtocol) -> Bool {
        guard let value = try? JSONParser.parse(line), case .object(let members) = value,
            case .string(let type)? = members["type"]
        else { return false }
        return AnalyticsRecord.names.contains(type)
    }

    /// Decodes a line ``encode(_:at:)`` writes.
    /// - Returns: The pose timestamp and the record.
    /// - Throws: ``MotionJSONError``: invalid JSON, a `"type"` that is no analytics record's
    ///   (``MotionJSONError/Kind/unknownType``), a missing key, a wrong type or an unknown raw value.
    public static func decode(_ line: some StringProtocol) throws(MotionJSONError) -> (
        t: Double, record: AnalyticsRecord
    ) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw MotionJSONError(.invalidJSON, detail: "invalid JSON: \(error)")
        }
        var type = ""
        do {
            let fields = try JSONFields(value, what: "an analytics record")
            type = try fields.string("type")
            guard AnalyticsRecord.names.contains(type) else {
                throw MotionJSONError(.unknownType, detail: "unknown type \(type.quotedExcerpt())")
            }
            return (try fields.number("t"), try record(type, fields))
        } catch let error as JSONShapeError {
            throw MotionJSONError(
                .invalidRecord, detail: type.isEmpty ? error.message : "\(type): \(error.message)")
        } catch let error as MotionJSONError {
            throw error
        } catch {
            throw MotionJSONError(.invalidRecord, detail: "\(type): \(error)")
        }
    }

    private static func record(_ type: String, _ fields: JSONFields) throws(JSONShapeError) -> AnalyticsRecord
    {
        switch type {
        case "repTempo":
            let faults = try fields.strings("faults").map { (name) throws(JSONShapeError) in try fault(name) }
            return .repTempo(
                RepTempo(
                    side: try side(fields), number: try fields.integer("rep"), set: try fields.integer("set"),
                    faults: faults, peak: try fields.number("peak"), low: try fields.number("low"),
                    start: try fields.number("start"), peakTime: try fields.number("peakTime"),
                    end: try fields.number("end"), timeUp: try fields.number("timeUp"),
                    timeAtTop: try fields.number("timeAtTop"), timeDown: try fields.number("timeDown")))
        case "repSymmetry":
            func side(_ key: String) throws(JSONShapeError) -> RepSymmetry.Side {
                let side = try fields.object(key)
                return RepSymmetry.Side(
                    number: try side.integer("rep"), peak: try side.number("peak"),
                    range: try side.number("range"),
                    timeUnderTension: try side.number("timeUnderTension"))
            }
            return .repSymmetry(
                RepSymmetry(
                    set: try fields.integer("set"), pair: try fields.integer("pair"), left: try side("left"),
                    right: try side("right")))
        default:
            let byFault = try fields.object("rejectedByFault")
            var rejectedByFault: [FormFeedback: Int] = [:]
            for name in byFault.members.keys.sorted() {
                rejectedByFault[try fault(name)] = try byFault.integer(name)
            }
            return .setSummary(
                SetSummary(
                    side: try side(fields), set: try fields.integer("set"),
                    isComplete: try fields.bool("complete"),
                    reps: try fields.integer("reps"), clean: try fields.integer("clean"),
                    rejectedByFault: rejectedByFault, firstPeak: try fields.number("firstPeak"),
                    lastPeak: try fields.number("lastPeak"), peakSlope: try nullable(fields, "peakSlope"),
                    meanCleanPeak: try nullable(fields, "meanCleanPeak"),
                    baseline: try nullable(fields, "baseline")))
        }
    }

    /// A key that must be present but may be `null`.
    private static func nullable(_ fields: JSONFields, _ key: String) throws(JSONShapeError) -> Double? {
        _ = try fields.value(key)
        return try fields.optionalNumber(key)
    }

    private static func side(_ fields: JSONFields) throws(JSONShapeError) -> BodySide {
        let name = try fields.string("side")
        guard let side = BodySide(rawValue: name) else {
            throw fields.error("side", "unknown side \(name.quotedExcerpt())")
        }
        return side
    }

    private static func fault(_ name: String) throws(JSONShapeError) -> FormFeedback {
        guard let fault = FormFeedback(rawValue: name) else {
            throw JSONShapeError("unknown fault \(name.quotedExcerpt())")
        }
        return fault
    }
}
